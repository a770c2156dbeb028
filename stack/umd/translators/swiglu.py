"""The gated activation SWIGLU (ONNX SwiGLU, opset 28; ``alpha`` a number, default 1.0, else an
InvalidRequestError on attrs.alpha).

Inputs in ONNX's order: A (the gate) F32, F16 or F64 (else an UnsupportedDtypeError on
inputs[0].dtype) and B (the linear value) of A's dtype (else an UnsupportedDtypeError on
inputs[1].dtype) and of A's shape, with no broadcasting (else a ShapeError on inputs[1].shape);
Y = A * sigmoid(alpha * A) * B of that dtype and shape (else an UnsupportedDtypeError or a
ShapeError on outputs[0]). Element-wise and so layout-agnostic, as the element-wise family: a
4-D operand stored in another layout than Y's is transposed into Y's first (TRANSPOSE into
scratch), so that A, B and Y are read in one order.
"""

from __future__ import annotations

from stack.kmd.kernels.ids import KernelId
from stack.umd.errors import ShapeError
from stack.umd.ops import Layout, OpKind, OpRequest
from stack.umd.plan import KernelCall, Semantic
from stack.umd.registry import OpTranslator
from stack.umd.templates import TemplateRegistry
from stack.umd.translators._common import (
    Builder,
    attr_float,
    check_dtype,
    need_counts,
    same_dtype,
)

_KERNEL = KernelId.SWIGLU


class SwiGLUTranslator(OpTranslator):
    """SWIGLU → the SwiGLU kernel on A, B and Y (4-D operands in Y's layout) with alpha."""

    family = "swiglu"
    ops = frozenset({OpKind.SWIGLU})

    def parse(self, req: OpRequest, templates: TemplateRegistry) -> Semantic:
        need_counts(req, (2, 2))
        check_dtype(templates, _KERNEL, req.inputs[0].dtype, "inputs[0].dtype")
        same_dtype(req, (0, 1))
        same_dtype(req, (0,), "outputs")
        alpha = attr_float(req.attr_map(), "alpha", 1.0)
        want = req.outputs[0].layout
        b = Builder(req)
        a_in, b_in = (b.input(i, want if len(d.shape) == 4 else Layout.ANY)
                      for i, d in enumerate(req.inputs))  # fmt: skip
        return b.build(KernelCall(_KERNEL, (a_in, b_in, b.output(0)), 2, {"alpha": alpha}))

    def infer(self, call: KernelCall) -> tuple[tuple[int, ...], ...]:
        a, b = call.ins[0].shape, call.ins[1].shape
        if b != a:
            raise ShapeError(f"SWIGLU takes B of A's shape {a} (no broadcasting), got {b}",
                             field="inputs[1].shape")  # fmt: skip
        return (a,)
