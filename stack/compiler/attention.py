"""Attention: its shape and dtype rule (registered into :mod:`stack.compiler.shape_rules`'
registry on import), the check of its operands the importer shares, and its constant-folding
evaluator (registered by :mod:`stack.compiler.evaluate`, since evaluate_ops is at its 300 lines).

Q, K and V are float tensors of one type and one rank: [B, Hq, L, D], [B, Hkv, S, D] and
[B, Hkv, S, Dv], or 3-D [B, L, Hq * D], [B, S, Hkv * D] and [B, S, Hkv * Dv] split by the
attributes ``q_num_heads`` and ``kv_num_heads`` (always set: for 4-D operands their head
counts); Hkv divides Hq (each key and value head serves Hq / Hkv query heads). The optional
inputs are a trailing run in ONNX's order: attn_mask (bool or Q's type, broadcastable to
[B, Hq, L, T] with a last axis of at most T), past_key [B, Hkv, P, D], past_value
[B, Hkv, P, Dv] and nonpad_kv_seqlen (int64 [B], with an empty past, P = 0); T = P + S. Four
results of Q's type: Y (Q's rank: [B, Hq, L, Dv] or [B, L, Hq * Dv]), present_key
[B, Hkv, T, D], present_value [B, Hkv, T, Dv] and qk_matmul_output [B, Hq, L, T]. The other
attributes, all set by the importer: is_causal, qk_matmul_output_mode, softmax_precision (0 or
ONNX's code of float32, float16 or float64), left_window_size and right_window_size (-1
unbounded), scale (resolved: 1 / sqrt(D) by default) and softcap (0: none). Folding computes as
the device kernel does (:mod:`stack.kmd.kernels.attention`), ONNX's reference step by step in
Q's type.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from stack.compiler.ir import ElemType, Node, OpType, TensorType
from stack.compiler.shape_rules import _fail, _need, register

#: The IR Attention's int attributes, in the order the kernel reads them.
ATTENTION_INTS = ("is_causal", "q_num_heads", "kv_num_heads", "qk_matmul_output_mode",
                  "softmax_precision", "left_window_size", "right_window_size")  # fmt: skip
#: softmax_precision's ONNX codes -> the type the softmax runs in (0: Q's).
SOFTMAX_PRECISIONS = {1: np.float32, 10: np.float16, 11: np.float64}


def _heads(t: TensorType, n: int) -> tuple[int, ...] | None:
    """``t``'s [B, H, S, D] for n heads, or None when n does not split it."""
    if len(t.shape) == 4:
        return t.shape
    b, s, hidden = t.shape
    return (b, n, s, hidden // n) if n >= 1 and hidden % n == 0 else None


def problem(ts: Sequence[TensorType | None], q_heads: int, kv_heads: int) -> str | None:
    """What makes these operands (Q, K, V, attn_mask, past_key, past_value, nonpad_kv_seqlen;
    None for an absent one) no Attention's with these head counts, or None when they fit."""
    q, k, v, mask, past_k, past_v, nonpad = (*ts, None, None, None, None, None, None, None)[:7]
    assert q is not None and k is not None and v is not None
    if not q.dtype.is_float or len(q.shape) not in (3, 4):
        return f"takes a float Q of rank 3 or 4, got {q}"
    if any(t.dtype != q.dtype or len(t.shape) != len(q.shape) for t in (k, v)):
        return f"takes K and V of Q's type and rank, got Q {q}, K {k}, V {v}"
    q4, k4, v4 = _heads(q, q_heads), _heads(k, kv_heads), _heads(v, kv_heads)
    if q4 is None or k4 is None or v4 is None:
        return f"takes q_num_heads {q_heads} and kv_num_heads {kv_heads} splitting Q, K and V"
    if (q4[1], k4[1]) != (q_heads, kv_heads) or q_heads % kv_heads:
        return f"takes kv heads dividing the query heads, got {k4[1]} for {q4[1]}"
    if k4[0] != q4[0] or v4[0] != q4[0] or k4[3] != q4[3] or v4[1:3] != k4[1:3]:
        return f"takes K [B, Hkv, S, {q4[3]}] and V [B, Hkv, S, Dv] for Q {q}, got {k}, {v}"
    if (past_k is None) != (past_v is None):
        return "takes past_key and past_value together"
    past = past_k.shape[2] if past_k is not None and len(past_k.shape) == 4 else 0
    for name, t, d in (("past_key", past_k, k4[3]), ("past_value", past_v, v4[3])):
        if t is not None and t != TensorType(q.dtype, (q4[0], k4[1], past, d)):
            return f"takes a {name} {q.dtype.value}[{q4[0]}, {k4[1]}, P, {d}], got {t}"
    scores = (*q4[:3], past + k4[2])
    if mask is not None and not _mask_fits(mask, q.dtype, scores):
        return f"takes a bool or {q.dtype.value} attn_mask broadcast to {list(scores)}, got {mask}"
    if nonpad is not None and (nonpad != TensorType(ElemType.I64, (q4[0],)) or past):
        return f"takes an int64 nonpad_kv_seqlen [{q4[0]}] and no past, got {nonpad}"
    return None


def _mask_fits(mask: TensorType, dtype: ElemType, scores: tuple[int, ...]) -> bool:
    if mask.dtype not in (dtype, ElemType.BOOL) or len(mask.shape) > 4 or not mask.shape:
        return False
    if not 1 <= mask.shape[-1] <= scores[-1]:
        return False
    return all(m in (1, s) for m, s in zip(mask.shape[-2::-1], scores[-2::-1], strict=False))


@register(OpType.ATTENTION)
def _attention(node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]) -> list:
    q, k, v = (_need(node, t, i) for i in range(3))
    why = problem(list(t), node.attr("q_num_heads", 0), node.attr("kv_num_heads", 0))
    if why is not None:
        raise _fail(node, f"Attention {why}")
    past = t[4] if len(t) > 5 else None
    hq, hkv = node.attr("q_num_heads", 0), node.attr("kv_num_heads", 0)
    q4, k4, v4 = (_heads(x, n) for x, n in ((q, hq), (k, hkv), (v, hkv)))
    assert q4 is not None and k4 is not None and v4 is not None
    total = (past.shape[2] if past is not None else 0) + k4[2]
    y = (q.shape[0], q.shape[1], hq * v4[3]) if len(q.shape) == 3 else (*q4[:3], v4[3])
    shapes = (y, (*k4[:2], total, k4[3]), (*v4[:2], total, v4[3]), (*q4[:3], total))
    return [TensorType(q.dtype, s) for s in shapes]


def _split(a: np.ndarray, n: int) -> np.ndarray:
    return a if a.ndim == 4 else a.reshape(*a.shape[:2], n, -1).transpose(0, 2, 1, 3)


def _mm(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype == np.float16:
        return np.matmul(a.astype(np.float32), b.astype(np.float32)).astype(np.float16)
    return np.matmul(a, b)


def _bias(node: Node, a: Sequence[np.ndarray], length: int, total: int) -> np.ndarray:
    dt = a[0].dtype.type
    zero, ninf = dt(0), dt(-np.inf)
    left, right = node.attr("left_window_size", -1), node.attr("right_window_size", -1)
    i, j = np.arange(length).reshape(length, 1), np.arange(total).reshape(1, total)
    nonpad = np.asarray(a[6]).astype(np.int64).reshape(-1, 1, 1, 1) if len(a) > 6 else None
    offset = nonpad - length if nonpad is not None else (a[4].shape[2] if len(a) > 5 else 0)
    out = np.zeros((length, total), dt)
    if len(a) > 3:
        m = np.asarray(a[3])
        m = np.where(m, zero, ninf) if m.dtype == np.bool_ else m
        if m.shape[-1] < total:
            pad = np.full((*m.shape[:-1], total - m.shape[-1]), ninf, dt)
            m = np.concatenate([m, pad], axis=-1)
        out = out + m
    if node.attr("is_causal", 0):
        out = out + np.where(j <= i + offset, zero, ninf)
    if left >= 0 or right >= 0:
        diff = i + offset - j
        allowed = (diff <= left if left >= 0 else True) & (-diff <= right if right >= 0 else True)
        out = out + np.where(allowed, zero, ninf)
    if nonpad is not None:
        out = out + np.where(j < nonpad, zero, ninf)
    return out


def evaluate(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Y, present_key, present_value and qk_matmul_output of constant operands, as the device
    kernel computes them."""
    hq, hkv = node.attr("q_num_heads", 0), node.attr("kv_num_heads", 0)
    q = _split(np.asarray(a[0]), hq)
    keys, values = _split(np.asarray(a[1]), hkv), _split(np.asarray(a[2]), hkv)
    if len(a) > 5:
        keys = np.concatenate([np.asarray(a[4]), keys], axis=2)
        values = np.concatenate([np.asarray(a[5]), values], axis=2)
    dt = q.dtype.type
    reps = hq // hkv
    with np.errstate(all="ignore"):  # IEEE results (-inf - -inf, overflow) are the answer
        root = dt(np.sqrt(node.attr("scale", 1.0 / np.sqrt(q.shape[3]))))
        logits = _mm(q * root, np.repeat(keys, reps, axis=1).swapaxes(2, 3) * root)
        softcap = node.attr("softcap", 0.0)
        if softcap > 0:
            logits = np.tanh(logits / dt(softcap)) * dt(softcap)
        b = _bias(node, a, q.shape[2], keys.shape[2])
        biased = logits + b
        precision = node.attr("softmax_precision", 0)
        work = biased.astype(SOFTMAX_PRECISIONS[precision]) if precision else biased
        top = work.max(axis=-1, keepdims=True)
        e = np.exp(work - np.where(np.isneginf(top), work.dtype.type(0), top))
        s = e.sum(axis=-1, keepdims=True)
        probs = e / np.where(s == 0, work.dtype.type(1), s)
        probs = np.where(np.isneginf(b.max(axis=-1, keepdims=True)), work.dtype.type(0), probs)
        qk = (logits, logits, biased, probs)[node.attr("qk_matmul_output_mode", 0)]
        y = _mm(probs.astype(q.dtype), np.repeat(values, reps, axis=1))
    if np.asarray(a[0]).ndim == 3:
        y = y.transpose(0, 2, 1, 3).reshape(*y.shape[:1], y.shape[2], -1)
    shape = (*q.shape[:3], keys.shape[2])
    return [y, keys.copy(), values.copy(), np.broadcast_to(qk, shape).astype(q.dtype)]
