"""Bit reinterpretation: BITCAST (no attributes; ONNX's ``to`` is the output's dtype).

X of any dtype; Y of X's shape and of a dtype of X's element width (F32 and I32, F64 and I64,
I8, U8 and BOOL), else an UnsupportedDtypeError on outputs[0].dtype. The kernel copies the
bytes as they are stored, so an X stored in another layout than Y's (NCHW, NHWC) is first
transposed into Y's.
"""

from __future__ import annotations

from stack.kmd.kernels.ids import KernelId
from stack.umd.errors import UnsupportedDtypeError
from stack.umd.ops import OpKind, OpRequest
from stack.umd.plan import KernelCall, Semantic
from stack.umd.registry import OpTranslator
from stack.umd.templates import TemplateRegistry
from stack.umd.translators._common import Builder, check_dtype, need_counts


def _same_width(req: OpRequest) -> None:
    x, y = req.inputs[0].dtype, req.outputs[0].dtype
    if x.itemsize != y.itemsize:
        raise UnsupportedDtypeError(
            f"BITCAST reads {x.name} ({8 * x.itemsize} bits) as {y.name} "
            f"({8 * y.itemsize} bits): the widths must match",
            field="outputs[0].dtype",
        )


class BitCastTranslator(OpTranslator):
    """BITCAST → the bitcast kernel on X (in Y's layout) and Y."""

    family = "bitcast"
    ops = frozenset({OpKind.BITCAST})

    def parse(self, req: OpRequest, templates: TemplateRegistry) -> Semantic:
        need_counts(req, (1, 1))
        check_dtype(templates, KernelId.BITCAST, req.inputs[0].dtype, "inputs[0].dtype")
        check_dtype(templates, KernelId.BITCAST, req.outputs[0].dtype, "outputs[0].dtype")
        _same_width(req)
        b = Builder(req)
        x = b.input(0, req.outputs[0].layout)
        return b.build(KernelCall(KernelId.BITCAST, (x, b.output(0)), 1, {}))

    def infer(self, call: KernelCall) -> tuple[tuple[int, ...], ...]:
        return (call.ins[0].shape,)
