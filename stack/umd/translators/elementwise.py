"""The element-wise family: ADD (optional fused ReLU), SUB, MUL, DIV with broadcasting, RELU.

Layout-agnostic, but when a 4-D operand's layout differs from the output's, it is converted
(TRANSPOSE into scratch) so that both are read in the output's layout.
"""

from __future__ import annotations

from stack.kmd.kernels.ids import KernelId
from stack.umd.ops import Layout, OpKind, OpRequest
from stack.umd.plan import KernelCall, Semantic
from stack.umd.registry import OpTranslator
from stack.umd.templates import TemplateRegistry
from stack.umd.translators._common import (
    Builder,
    attr_int,
    broadcast_inputs,
    check_dtype,
    need_counts,
    same_dtype,
)

_KERNEL = {
    OpKind.ADD: KernelId.ADD,
    OpKind.SUB: KernelId.SUB,
    OpKind.MUL: KernelId.MUL,
    OpKind.DIV: KernelId.DIV,
    OpKind.RELU: KernelId.RELU,
}


class ElementwiseTranslator(OpTranslator):
    """Element-wise ops; the output shape is the broadcast of the inputs'."""

    family = "elementwise"
    ops = frozenset(_KERNEL)

    def parse(self, req: OpRequest, templates: TemplateRegistry) -> Semantic:
        kernel = _KERNEL[req.op]
        need_counts(req, (1, 1) if req.op is OpKind.RELU else (2, 2))
        same_dtype(req, tuple(range(len(req.inputs))))
        same_dtype(req, (0,), "outputs")
        check_dtype(templates, kernel, req.inputs[0].dtype, "inputs[0].dtype")
        kattrs: dict = {}
        if req.op is OpKind.ADD:
            kattrs["relu"] = attr_int(req.attr_map(), "relu", 0)
        want = req.outputs[0].layout
        b = Builder(req)
        ins = tuple(
            b.input(i, want if len(d.shape) == 4 else Layout.ANY) for i, d in enumerate(req.inputs)
        )
        return b.build(KernelCall(kernel, (*ins, b.output(0)), len(ins), kattrs))

    def infer(self, call: KernelCall) -> tuple[tuple[int, ...], ...]:
        return (broadcast_inputs(call),)
