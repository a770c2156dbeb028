"""LinearAttention: its shape and dtype rule (registered into :mod:`stack.compiler.shape_rules`'
registry on import), the check of its operands the importer shares, and its constant-folding
evaluator (registered by :mod:`stack.compiler.evaluate`, since evaluate_ops is at its 300 lines).

query [B, T, Hq * Dk], key [B, T, Hkv * Dk] and value [B, T, Hkv * Dv] are float16 or float32
tensors of one type, split by the attributes ``q_num_heads`` and ``kv_num_heads`` (Hkv dividing
Hq: each key and value head, and its state, serves Hq / Hkv query heads). The optional inputs
are a trailing run in ONNX's order: past_state [B, Hkv, Dk, Dv] (float16 or float32, its own
type), decay [B, T, Hkv] or [B, T, Hkv * Dk] and beta [B, T, Hkv] or [B, T, 1] of query's type.
``update_rule`` is one of UPDATE_RULES (ONNX's names): a gated rule reads decay, a delta one
beta, and a rule ignores an input it does not read (the importer's zero filler). ``scale`` is
ONNX's (0: 1 / sqrt(Dk)). Two results: output [B, T, Hq * Dv] of query's type and
present_state [B, Hkv, Dk, Dv] of past_state's (query's without one). Folding computes as the
device kernel does (:mod:`stack.kmd.kernels.linear_attention`): ONNX's reference step by step
in float32.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from stack.compiler.ir import ElemType, Node, OpType, TensorType
from stack.compiler.shape_rules import _fail, _need, register

#: The values of the IR op's ``update_rule`` (ONNX's names, in the kernel's code order).
UPDATE_RULES = ("linear", "gated", "delta", "gated_delta")
_TYPES = (ElemType.F16, ElemType.F32)


def reads(rule: str) -> tuple[bool, bool]:
    """(decay, beta): whether ``rule`` reads each."""
    return rule in ("gated", "gated_delta"), rule in ("delta", "gated_delta")


def problem(ts: Sequence[TensorType | None], q_heads: int, kv_heads: int) -> str | None:
    """What makes these operands (query, key, value, past_state, decay, beta; None for an absent
    one) no LinearAttention's with these head counts, or None when they fit."""
    q, k, v, state, decay, beta = (*ts, None, None, None, None, None, None)[:6]
    assert q is not None and k is not None and v is not None
    if q.dtype not in _TYPES or any(
        t is not None and t.dtype != q.dtype for t in (k, v, decay, beta)
    ):
        return f"takes float16 or float32 query, key, value, decay and beta of one type, got {q}"
    if state is not None and state.dtype not in _TYPES:
        return f"takes a float16 or float32 past_state, got {state}"
    if any(len(t.shape) != 3 for t in (q, k, v)):
        return f"takes 3-D query, key and value, got {q}, {k}, {v}"
    if q_heads < 1 or kv_heads < 1 or q_heads % kv_heads:
        return f"takes q_num_heads {q_heads} a positive multiple of kv_num_heads {kv_heads}"
    (b, t, hidden), dk = q.shape, q.shape[2] // q_heads
    if hidden % q_heads or k.shape != (b, t, kv_heads * dk):
        return f"takes key [{b}, {t}, {kv_heads} * Dk] for query {q} of {q_heads} heads, got {k}"
    if v.shape[:2] != (b, t) or v.shape[2] % kv_heads:
        return f"takes value [{b}, {t}, {kv_heads} * Dv], got {v}"
    want = (b, kv_heads, dk, v.shape[2] // kv_heads)
    if state is not None and state.shape != want:
        return f"takes a past_state {list(want)}, got {state}"
    if decay is not None and decay.shape not in ((b, t, kv_heads), (b, t, kv_heads * dk)):
        return f"takes decay [{b}, {t}, {kv_heads}] or [{b}, {t}, {kv_heads * dk}], got {decay}"
    if beta is not None and beta.shape not in ((b, t, kv_heads), (b, t, 1)):
        return f"takes beta [{b}, {t}, {kv_heads}] or [{b}, {t}, 1], got {beta}"
    return None


@register(OpType.LINEAR_ATTENTION)
def _linear_attention(
    node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]
) -> list:
    q, _, v = (_need(node, t, i) for i in range(3))
    hq, hkv = node.attr("q_num_heads", 0), node.attr("kv_num_heads", 0)
    why = problem(list(t), hq, hkv)
    decay, beta = reads(node.attr("update_rule", "gated_delta"))
    if why is None and len(t) < (6 if beta else 5 if decay else 3):
        why = f"{node.attr('update_rule', 'gated_delta')} takes its decay and beta"
    if why is not None:
        raise _fail(node, f"LinearAttention {why}")
    state = t[3].dtype if len(t) > 3 and t[3] is not None else q.dtype
    dk, dv = q.shape[2] // hq, v.shape[2] // hkv
    return [
        TensorType(q.dtype, (*q.shape[:2], hq * dv)),
        TensorType(state, (q.shape[0], hkv, dk, dv)),
    ]


def _heads(x: np.ndarray, n: int) -> np.ndarray:
    b, t, hidden = x.shape
    return x.reshape(b, t, n, hidden // n).transpose(0, 2, 1, 3).astype(np.float32)


def evaluate(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray]:
    """output and present_state of constant operands, as the device kernel computes them."""
    hq, hkv = node.attr("q_num_heads", 0), node.attr("kv_num_heads", 0)
    gated, delta = reads(node.attr("update_rule", "gated_delta"))
    q, k, v = (_heads(np.asarray(x), n) for x, n in zip(a[:3], (hq, hkv, hkv), strict=True))
    b, _, t, dk = q.shape
    s_type = np.asarray(a[3 if len(a) > 3 else 0]).dtype  # past_state's, else query's
    state = (np.asarray(a[3]).astype(np.float32) if len(a) > 3
             else np.zeros((b, hkv, dk, v.shape[3]), np.float32))  # fmt: skip
    decay = np.asarray(a[4]).reshape(b, t, hkv, -1).transpose(0, 2, 1, 3) if gated else None
    beta = np.asarray(a[5]).reshape(b, t, -1, 1).transpose(0, 2, 1, 3) if delta else None
    scale = node.attr("scale", 0.0) or 1.0 / np.sqrt(dk)
    y = np.zeros((b, hq, t, v.shape[3]), np.float32)
    with np.errstate(all="ignore"):  # IEEE results (overflow, inf - inf) are the answer
        for i in range(t):
            v_t = v[:, :, i, :]
            if decay is not None:
                state = state * np.exp(decay[:, :, i, :].astype(np.float32))[..., None]
            if beta is not None:
                v_t = beta[:, :, i, :].astype(np.float32) * (
                    v_t - np.einsum("bhdm,bhd->bhm", state, k[:, :, i, :])
                )
            state = state + k[:, :, i, :, None] * v_t[..., None, :]
            read = np.repeat(state, hq // hkv, axis=1)
            prod = np.einsum("bhd,bhdm->bhm", q[:, :, i, :], read)
            y[:, :, i, :] = float(scale) * prod.astype(np.float64)
    out = y.transpose(0, 2, 1, 3).reshape(b, t, -1).astype(np.asarray(a[0]).dtype)
    return [out, state.astype(s_type)]
