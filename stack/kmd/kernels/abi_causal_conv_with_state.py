"""CAUSAL_CONV_WITH_STATE's ABI, registered into :data:`stack.kmd.kernels.abi.ABIS` when that
module is imported (abi.py is at its 300 lines); the conventions are :mod:`stack.kmd.kernels.abi`'s.

ONNX's inputs in ONNX's order and names (input and weight, then the optional bias and
past_state: a past_state without a bias takes a zero bias) and both of its outputs, output then
present_state, always written; ONNX's string attribute activation as the one int immediate
(:class:`~stack.kmd.kernels.causal_conv_with_state.CausalConvActivation`, default none); no grid
axis (the convolution runs whole)."""

from __future__ import annotations

from stack.kmd.kernels.abi import Imm, KernelAbi, register
from stack.kmd.kernels.ids import KernelId

register(
    KernelAbi(
        KernelId.CAUSAL_CONV_WITH_STATE, ("input", "weight"), ("output", "present_state"),
        optional=("bias", "past_state"),
        ints=(Imm("activation", 0, "CausalConvActivation: 0 none, 1 SiLU (silu, swish)"),),
        doc="ONNX CausalConvWithState: input[B,C,L], weight[C,1,K], bias[C], "
        "past_state[B,C,K-1] (zeros when absent) -> P = concat(past_state, input) on the "
        "length axis; output[B,C,L] = act(sum_k weight[c,0,k] * P[b,c,t+k] + bias[c]) (float64, "
        "rounded once), present_state[B,C,K-1] = P's last K-1 positions.",
    )
)  # fmt: skip
