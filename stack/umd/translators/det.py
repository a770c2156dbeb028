"""Determinants: DET (ONNX Det; no attributes).

X [*, M, M] (F32, F16 or F64, else an UnsupportedDtypeError on inputs[0].dtype; a rank below 2
or trailing axes that differ a ShapeError on inputs[0].shape) gives Y [*] of X's dtype (another
an UnsupportedDtypeError on outputs[0].dtype), one determinant per trailing square matrix. The
matrices are X's trailing two axes as stored: like MATMUL's operands, X is taken as given,
whatever its layout.
"""

from __future__ import annotations

from stack.kmd.kernels.ids import KernelId
from stack.umd.errors import ShapeError
from stack.umd.ops import OpKind, OpRequest
from stack.umd.plan import KernelCall, Semantic
from stack.umd.registry import OpTranslator
from stack.umd.templates import TemplateRegistry
from stack.umd.translators._common import Builder, check_dtype, need_counts, same_dtype


class DetTranslator(OpTranslator):
    """DET → the determinant kernel on X and Y, as stored."""

    family = "det"
    ops = frozenset({OpKind.DET})

    def parse(self, req: OpRequest, templates: TemplateRegistry) -> Semantic:
        need_counts(req, (1, 1))
        check_dtype(templates, KernelId.DET, req.inputs[0].dtype, "inputs[0].dtype")
        same_dtype(req, (0,), "outputs")
        b = Builder(req)
        return b.build(KernelCall(KernelId.DET, (b.input(0), b.output(0)), 1, {}))

    def infer(self, call: KernelCall) -> tuple[tuple[int, ...], ...]:
        x = call.ins[0].shape
        if len(x) < 2 or x[-1] != x[-2]:
            raise ShapeError(f"DET takes X of shape [*, M, M], got {x}", field="inputs[0].shape")
        return (x[:-2],)
