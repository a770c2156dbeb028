"""LINEAR_ATTENTION's ABI, registered into :data:`stack.kmd.kernels.abi.ABIS` when that module is
imported (abi.py is at its 300 lines); the conventions are :mod:`stack.kmd.kernels.abi`'s.

ONNX's inputs in ONNX's order and names (query, key and value, then the optional past_state,
decay and beta: a later one without an earlier takes a zero past_state, or a zero decay beside
the delta rule's beta) and both of its outputs, always written; update_rule (by its code) and
the head counts as three int immediates and scale as a float one, in the order the kernel reads
them; no grid axis (the recurrence runs whole)."""

from __future__ import annotations

from stack.kmd.kernels.abi import Imm, KernelAbi, register
from stack.kmd.kernels.ids import KernelId

register(
    KernelAbi(
        KernelId.LINEAR_ATTENTION, ("query", "key", "value"), ("output", "present_state"),
        optional=("past_state", "decay", "beta"),
        ints=(
            Imm("update_rule", 3, "LinearUpdateRule: 0 linear, 1 gated, 2 delta, 3 gated_delta"),
            Imm("q_num_heads", 0, "Hq of query [B, T, Hq * Dk]"),
            Imm("kv_num_heads", 0, "Hkv of key and value, dividing Hq"),
        ),
        floats=(Imm("scale", 0.0, "the output's scale; 0: 1 / sqrt(Dk)"),),
        doc="ONNX LinearAttention: query[B,T,Hq*Dk], key[B,T,Hkv*Dk], value[B,T,Hkv*Dv], "
        "past_state[B,Hkv,Dk,Dv], decay[B,T,Hkv or Hkv*Dk], beta[B,T,Hkv or 1] -> "
        "output[B,T,Hq*Dv] = scale * q_t^T S_t per token, S_t the state after update_rule's "
        "step (gated: exp(decay) S; delta: beta (v - S^T k)), present_state = S_T in "
        "past_state's dtype; float32 inside, as ONNX's reference.",
    )
)  # fmt: skip
