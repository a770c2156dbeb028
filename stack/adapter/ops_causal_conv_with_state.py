"""The importer of CausalConvWithState (opset 27+), the stateful causal depthwise 1-D
convolution of Gated DeltaNet and Mamba blocks; in a module of its own beside
:mod:`stack.adapter.ops_nn`, whose Conv it follows (ops_nn would pass its 300 lines), as
DeformConv's.

The IR ``CausalConvWithState`` takes ONNX's inputs in ONNX's order: input [B, C, L] (float16 or
float32, ONNX's types with an IR type), weight [C, 1, K], the optional bias [C] and past_state
[B, C, K - 1], all of input's type; a past_state without a bias takes a zero bias, the kernel's
optional inputs being a trailing run. ``activation`` (none, silu or swish; default none) crosses
by name. It always has two outputs, output and present_state: a node that leaves present_state
unnamed gets a fresh value for it, which nothing reads. What ONNX forbids is a ModelFormatError
naming the node: an older opset, a missing or extra input or output, operands of another type
or shape, an unknown activation (a bfloat16 input, which ONNX allows, has no IR type and is
refused at the graph input, an UnsupportedTypeError naming the tensor). Constant operands fold
at import.
"""

from __future__ import annotations

import numpy as np
import onnx

from stack.adapter.context import ImportContext, attributes
from stack.adapter.errors import ModelFormatError
from stack.adapter.registry import register
from stack.compiler import ElemType, OpType
from stack.compiler.causal_conv_with_state import activation_problem, problem

_OP = "CausalConvWithState"


@register(_OP)
def causal_conv_with_state(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """P = concat(past_state or zeros, input) on the length axis; output = act(the depthwise
    convolution of P with weight, valid, + bias), present_state = P's last K - 1 positions
    (opset 27+): the IR ``CausalConvWithState`` of input's type."""
    ins, outs = list(proto.input), list(proto.output)
    while len(outs) > 1 and not outs[-1]:
        outs.pop()

    def bad(why: str) -> ModelFormatError:
        return ModelFormatError(f"{_OP} {why}", op=_OP, node=name)

    if (ctx.opset < 27 or not 2 <= len(ins) <= 4 or not all(ins[:2]) or not 1 <= len(outs) <= 2
            or not outs[0]):  # fmt: skip
        raise bad(f"(opset 27+, model opset {ctx.opset}) takes input, weight and the optional "
                  f"bias and past_state, and output and present_state, got {ins} -> "
                  f"{list(proto.output)}")  # fmt: skip
    x = ctx.type_of(ins[0])
    if x.dtype not in (ElemType.F16, ElemType.F32):
        raise bad(f"takes a float16 or float32 input, got {x}")
    bias, past = (ctx.type_of(v) if v else None for v in (*ins[2:], "", "")[:2])
    activation = attributes(proto).get("activation", "none")
    why = problem(x, ctx.type_of(ins[1]), bias, past) or activation_problem(activation)
    if why is not None:
        raise bad(why)
    inputs = [v for v in ins if v]
    if past is not None and bias is None:  # the past_state needs a bias before it: a zero one
        zero = ctx.add_const(ctx.fresh(f"{name}.bias"), np.zeros(x.shape[1], x.dtype.numpy))
        inputs.insert(2, zero)
    if len(outs) < 2:
        outs.append(ctx.fresh(f"{name}.present_state"))
    ctx.emit(name, OpType.CAUSAL_CONV_WITH_STATE, inputs, outs, activation=activation)
