"""The stateful causal depthwise 1-D convolution: CAUSAL_CONV_WITH_STATE (ONNX
CausalConvWithState, opset 27; ``activation`` by name: none, silu or swish — SiLU either way —,
default none, another an InvalidRequestError on attrs.activation).

Inputs in ONNX's order: input [B, C, L] F32, F16 or F64 (else an UnsupportedDtypeError on
inputs[0].dtype; another rank a ShapeError on inputs[0].shape), weight [C, 1, K] with K >= 1, then
the optional bias [C] and past_state [B, C, K - 1] (a past_state needs the bias before it: the
compiler gives a zero one), all of input's dtype (else an UnsupportedDtypeError on inputs[j].dtype)
and shape (else a ShapeError on inputs[j].shape). Two outputs of input's dtype (else an
UnsupportedDtypeError on outputs[j].dtype), both always written: output [B, C, L] and
present_state [B, C, K - 1] (else a ShapeError on outputs[j].shape). Every operand is 3-D or 1-D,
so no layout conversion applies: each is taken as stored.
"""

from __future__ import annotations

from stack.kmd.kernels.causal_conv_with_state import CausalConvActivation
from stack.kmd.kernels.ids import KernelId
from stack.umd.errors import InvalidRequestError, ShapeError
from stack.umd.ops import OpKind, OpRequest
from stack.umd.plan import KernelCall, Semantic
from stack.umd.registry import OpTranslator
from stack.umd.templates import TemplateRegistry
from stack.umd.translators._common import Builder, check_dtype, need_counts, same_dtype

_KERNEL = KernelId.CAUSAL_CONV_WITH_STATE

#: CAUSAL_CONV_WITH_STATE's activation names (ONNX's) -> the kernel's immediate.
ACTIVATIONS = {
    "none": CausalConvActivation.NONE,
    "silu": CausalConvActivation.SILU,
    "swish": CausalConvActivation.SILU,
}


def _shape_error(j: int, want: str, got: tuple[int, ...]) -> ShapeError:
    return ShapeError(f"CAUSAL_CONV_WITH_STATE inputs[{j}] must be {want}, got {got}",
                      field=f"inputs[{j}].shape")  # fmt: skip


class CausalConvWithStateTranslator(OpTranslator):
    """CAUSAL_CONV_WITH_STATE → the causal convolution kernel on input, weight, the optional bias
    and past_state, output and present_state, with activation as its immediate."""

    family = "causal_conv_with_state"
    ops = frozenset({OpKind.CAUSAL_CONV_WITH_STATE})

    def parse(self, req: OpRequest, templates: TemplateRegistry) -> Semantic:
        need_counts(req, (2, 4), 2)
        check_dtype(templates, _KERNEL, req.inputs[0].dtype, "inputs[0].dtype")
        same_dtype(req, tuple(range(len(req.inputs))))
        same_dtype(req, (0, 1), "outputs")
        activation = req.attr_map().get("activation", "none")
        if not isinstance(activation, str) or activation not in ACTIVATIONS:
            known = ", ".join(ACTIVATIONS)
            raise InvalidRequestError(f"unknown activation {activation!r}; known: {known}",
                                      field="attrs.activation")  # fmt: skip
        b = Builder(req)
        ins = tuple(b.input(i) for i in range(len(req.inputs)))
        call = KernelCall(_KERNEL, (*ins, b.output(0), b.output(1)), len(ins),
                          {"activation": int(ACTIVATIONS[activation])})  # fmt: skip
        return b.build(call)

    def infer(self, call: KernelCall) -> tuple[tuple[int, ...], ...]:
        x, w = call.ins[0].shape, call.ins[1].shape
        if len(x) != 3:
            raise ShapeError(f"CAUSAL_CONV_WITH_STATE takes input [B, C, L], got {x}",
                             field="inputs[0].shape")  # fmt: skip
        n, c = x[:2]
        if len(w) != 3 or w[:2] != (c, 1) or w[2] < 1:
            raise _shape_error(1, f"[{c}, 1, K >= 1] for input {x}", w)
        state = (n, c, w[2] - 1)
        if len(call.ins) > 2 and call.ins[2].shape != (c,):
            raise _shape_error(2, str((c,)), call.ins[2].shape)
        if len(call.ins) > 3 and call.ins[3].shape != state:
            raise _shape_error(3, str(state), call.ins[3].shape)
        return (x, state)
