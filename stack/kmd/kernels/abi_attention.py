"""ATTENTION's ABI, registered into :data:`stack.kmd.kernels.abi.ABIS` when that module is
imported (abi.py is at its 300 lines); the conventions are :mod:`stack.kmd.kernels.abi`'s.

ONNX's inputs in ONNX's order and names (Q, K and V, then the optional attn_mask, past_key,
past_value and nonpad_kv_seqlen: a later one without an earlier takes a zero attn_mask, or an
empty past_key and past_value beside nonpad_kv_seqlen) and all four of its outputs, always
written; ONNX's int attributes as seven int immediates and scale and softcap as two float ones,
in the order the kernel reads them; no grid axis (the attention runs whole)."""

from __future__ import annotations

from stack.kmd.kernels.abi import Imm, KernelAbi, register
from stack.kmd.kernels.ids import KernelId

register(
    KernelAbi(
        KernelId.ATTENTION, ("Q", "K", "V"),
        ("Y", "present_key", "present_value", "qk_matmul_output"),
        optional=("attn_mask", "past_key", "past_value", "nonpad_kv_seqlen"),
        ints=(
            Imm("is_causal", 0, "1: key j attends query i iff j <= i + offset"),
            Imm("q_num_heads", 0, "Hq of a 3-D Q [B, L, Hq * D]; unused for a 4-D Q"),
            Imm("kv_num_heads", 0, "Hkv of a 3-D K and V; unused for 4-D ones"),
            Imm("qk_matmul_output_mode", 0, "qk_matmul_output: 0/1 logits after softcap, "
                "2 with the bias, 3 the probabilities"),
            Imm("softmax_precision", 0, "SoftmaxPrecision: 0 Q's dtype, 1 f32, 10 f16, 11 f64"),
            Imm("left_window_size", -1, "keys at most this far before i + offset; -1 any"),
            Imm("right_window_size", -1, "keys at most this far after i + offset; -1 any"),
        ),
        floats=(
            Imm("scale", 0.0, "the logits' scale; 0: 1 / sqrt(D)"),
            Imm("softcap", 0.0, "> 0: logits -> softcap * tanh(logits / softcap)"),
        ),
        doc="ONNX Attention: Q[B,Hq,L,D] or [B,L,Hq*D], K[B,Hkv,S,D], V[B,Hkv,S,Dv] (or 3-D), "
        "attn_mask (bool or additive, broadcast to [B,Hq,L,T], padded with -inf), past_key "
        "[B,Hkv,P,D], past_value [B,Hkv,P,Dv], nonpad_kv_seqlen[B] -> Y = softmax(softcap(Q K^T "
        "* scale) + bias) V (each KV head serving Hq/Hkv query heads), present_key/value = "
        "concat(past, new) [B,Hkv,T,*], qk_matmul_output[B,Hq,L,T]; in Q's dtype as ONNX's "
        "reference.",
    )
)  # fmt: skip
