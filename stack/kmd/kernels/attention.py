"""Scaled dot-product attention (ONNX Attention, opsets 23 to 25) for any ``xp``: ATTENTION.

Q is [B, Hq, L, D] or [B, L, Hq * D], K [B, Hkv, S, D] or [B, S, Hkv * D] and V
[B, Hkv, S, Dv] or [B, S, Hkv * Dv], one float dtype and one rank (a 3-D operand is split into
its heads by the immediates ``q_num_heads`` and ``kv_num_heads``; a 4-D one carries them). The
optional inputs form a trailing run in ONNX's order: attn_mask (bool, True attending, or an
additive bias of Q's dtype; broadcastable to [B, Hq, L, T] with a last axis of at most T,
padded with -inf), past_key [B, Hkv, P, D] and past_value [B, Hkv, P, Dv], and nonpad_kv_seqlen
(integer [B], the valid keys of each batch; its past_key and past_value are then empty, P = 0,
as ONNX allows no cache beside it). T = P + S. The four outputs are always written: Y of Q's
rank ([B, Hq, L, Dv] or [B, L, Hq * Dv]), present_key [B, Hkv, T, D] = concat(past_key, K),
present_value [B, Hkv, T, Dv] and qk_matmul_output [B, Hq, L, T].

The computation is ONNX's reference, step by step in Q's dtype (the two matrix products of a
float16 one summed in float32 and rounded once): each key and value head serves Hq / Hkv query
heads in turn (group-query attention); the logits (Q * sqrt(scale)) @ (K * sqrt(scale))^T
(``scale`` 0 meaning 1 / sqrt(D)); ``softcap`` > 0 maps them to softcap * tanh(x / softcap);
the additive bias (the mask, then ``is_causal``'s j <= i + offset, the window
``left_window_size`` / ``right_window_size`` around i + offset, each -1 unbounded, then the keys
past nonpad_kv_seqlen; offset P, or nonpad_kv_seqlen - L per batch) is added; a softmax over the
keys (in ``softmax_precision``'s type when given, :class:`SoftmaxPrecision`) whose rows with an
all -inf bias are zero; Y = probabilities @ V. qk_matmul_output holds, by
``qk_matmul_output_mode``, the logits after softcap (0 and 1), with the bias (2) or the
probabilities (3). Operands of another dtype or shape, or immediates out of range, are a kernel
fault (a ValueError).
"""

from __future__ import annotations

import enum
import math
from typing import Any

import numpy as np

from stack.kmd.kernels.ids import KernelId


class SoftmaxPrecision(enum.IntEnum):
    """ATTENTION's ``softmax_precision`` (its fifth int immediate): ONNX's TensorProto codes,
    0 meaning Q's dtype. Values are ABI."""

    SAME = 0
    FLOAT = 1
    FLOAT16 = 10
    DOUBLE = 11


#: The int immediates' defaults: is_causal, q_num_heads, kv_num_heads, qk_matmul_output_mode,
#: softmax_precision, left_window_size, right_window_size.
DEFAULT_INTS = (0, 0, 0, 0, 0, -1, -1)

_PRECISION = {
    SoftmaxPrecision.FLOAT: np.float32,
    SoftmaxPrecision.FLOAT16: np.float16,
    SoftmaxPrecision.DOUBLE: np.float64,
}


def heads(t: Any, n: int) -> Any:
    """``t`` as [B, H, S, D]: a 4-D one as it is, a 3-D [B, S, n * D] split into n heads."""
    if t.ndim == 4:
        return t
    b, s, hidden = t.shape
    return t.reshape(b, s, n, hidden // n).transpose(0, 2, 1, 3)


def _fail(what: str) -> ValueError:
    return ValueError(f"Attention {what}")


def check(ins: list[Any], outs: list[Any], hq: int, hkv: int) -> tuple[int, int, int]:
    """(Hq, Hkv, T) of the operands, checked (ValueError naming the operand that does not fit)."""
    q, k, v = ins[:3]
    if q.dtype.kind != "f" or q.ndim not in (3, 4):
        raise _fail(f"Q {q.dtype}{q.shape} is not a float 3-D or 4-D tensor")
    for name, t in (("K", k), ("V", v)):
        if t.dtype != q.dtype or t.ndim != q.ndim or t.shape[0] != q.shape[0]:
            raise _fail(f"{name} {t.dtype}{t.shape} does not go with Q {q.dtype}{q.shape}")
    if q.ndim == 4:
        hq, hkv = q.shape[1], k.shape[1]
    elif min(hq, hkv) < 1 or q.shape[2] % hq or k.shape[2] % hkv or v.shape[2] % hkv:
        raise _fail(f"heads {hq} / {hkv} do not split Q {q.shape}, K {k.shape}, V {v.shape}")
    qh, kh, vh = heads(q, hq), heads(k, hkv), heads(v, hkv)
    if hq % hkv or vh.shape[1:3] != kh.shape[1:3] or kh.shape[3] != qh.shape[3]:
        raise _fail(f"K {k.shape} and V {v.shape} do not serve Q {q.shape}")
    b, _, length, _ = qh.shape
    past = ins[4].shape[2] if len(ins) > 5 else 0
    total = past + kh.shape[2]
    want = {
        "past_key": (b, hkv, past, kh.shape[3]),
        "past_value": (b, hkv, past, vh.shape[3]),
        "Y": (*q.shape[:-1], hq * vh.shape[3]) if q.ndim == 3 else (b, hq, length, vh.shape[3]),
        "present_key": (b, hkv, total, kh.shape[3]),
        "present_value": (b, hkv, total, vh.shape[3]),
        "qk_matmul_output": (b, hq, length, total),
    }
    named = list(zip(("past_key", "past_value"), ins[4:6], strict=False))
    for name, t in [*named, *zip(("Y", "present_key", "present_value", "qk_matmul_output"), outs,
                                 strict=True)]:  # fmt: skip
        if t.dtype != q.dtype or t.shape != want[name]:
            raise _fail(f"{name} {t.dtype}{t.shape} is not {q.dtype}{want[name]}")
    if len(ins) > 3:
        m = ins[3]
        if m.dtype not in (q.dtype, np.bool_) or not 1 <= m.ndim <= 4 or m.shape[-1] > total:
            raise _fail(f"attn_mask {m.dtype}{m.shape} is not bool or {q.dtype} of at most "
                        f"{total} keys")  # fmt: skip
    if len(ins) > 6 and (ins[6].dtype.kind not in "iu" or ins[6].shape != (b,) or past):
        raise _fail(f"nonpad_kv_seqlen {ins[6].dtype}{ins[6].shape} is not an integer [{b}] "
                    "without a past")  # fmt: skip
    return hq, hkv, total


def bias(xp: Any, ins: list[Any], length: int, total: int, ints: tuple[int, ...]) -> Any:
    """The additive bias of Q's dtype, broadcastable to [B, Hq, L, T]: the mask (padded with
    -inf), the causal frontier, the window and the padded keys, 0 where attended, -inf not; the
    offset of query i is the past's length P, or nonpad_kv_seqlen - L per batch."""
    dt = ins[0].dtype.type
    zero, ninf = dt(0), dt(-np.inf)
    causal, left, right = ints[0], ints[5], ints[6]
    i, j = xp.arange(length).reshape(length, 1), xp.arange(total).reshape(1, total)
    nonpad = ins[6].astype(np.int64).reshape(-1, 1, 1, 1) if len(ins) > 6 else None
    offset = nonpad - length if nonpad is not None else (ins[4].shape[2] if len(ins) > 5 else 0)
    out = xp.zeros((length, total), dt)
    if len(ins) > 3:
        m = ins[3]
        m = xp.where(m, zero, ninf) if m.dtype == np.bool_ else m
        if m.shape[-1] < total:
            pad = xp.full((*m.shape[:-1], total - m.shape[-1]), ninf, dt)
            m = xp.concatenate([m, pad], axis=-1)
        out = out + m
    if causal:
        out = out + xp.where(j <= i + offset, zero, ninf)
    if left >= 0 or right >= 0:
        diff = i + offset - j
        allowed = (diff <= left if left >= 0 else True) & (-diff <= right if right >= 0 else True)
        out = out + xp.where(allowed, zero, ninf)
    if nonpad is not None:
        out = out + xp.where(j < nonpad, zero, ninf)
    return out


def _mm(xp: Any, a: Any, b: Any) -> Any:
    """a @ b in their dtype; float16 summed in float32 and rounded once."""
    if a.dtype == np.float16:
        return xp.matmul(a.astype(np.float32), b.astype(np.float32)).astype(np.float16)
    return xp.matmul(a, b)


def softmax(xp: Any, x: Any) -> Any:
    """Softmax over the last axis in x's dtype; a row of -inf gives zeros, not NaN."""
    top = x.max(axis=-1, keepdims=True)
    top = xp.where(xp.isneginf(top), x.dtype.type(0), top)
    e = xp.exp(x - top)
    s = e.sum(axis=-1, keepdims=True)
    return e / xp.where(s == 0, x.dtype.type(1), s)


def attention(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y, present_key, present_value and qk_matmul_output of Q, K, V and the optional attn_mask,
    past_key, past_value and nonpad_kv_seqlen; ints: is_causal, q_num_heads, kv_num_heads,
    qk_matmul_output_mode, softmax_precision, left_window_size, right_window_size; floats:
    scale (0: 1 / sqrt(D)), softcap. Operands or immediates that do not fit: ValueError."""
    ints = (*ints, *DEFAULT_INTS[len(ints) :])
    scale, softcap = (*fl, 0.0, 0.0)[:2]
    mode, precision = ints[3], ints[4]
    if ints[0] not in (0, 1) or mode not in (0, 1, 2, 3) or precision not in set(SoftmaxPrecision):
        raise _fail(f"immediates {ints} out of range")
    if min(ints[5:7]) < -1 or scale < 0:
        raise _fail(f"window {ints[5:7]} or scale {scale} out of range")
    hq, hkv, total = check(ins, outs, ints[1], ints[2])
    q = heads(ins[0], hq)
    dt = q.dtype.type
    keys, values = heads(ins[1], hkv), heads(ins[2], hkv)
    if len(ins) > 5:
        keys = xp.concatenate([ins[4], keys], axis=2)
        values = xp.concatenate([ins[5], values], axis=2)
    xp.copyto(outs[1], keys)
    xp.copyto(outs[2], values)
    with np.errstate(all="ignore"):  # IEEE results (-inf - -inf, overflow) are the answer
        root = dt(math.sqrt(scale or 1.0 / math.sqrt(q.shape[3])))
        reps = hq // hkv
        k_t = xp.repeat(keys, reps, axis=1).swapaxes(2, 3)
        logits = _mm(xp, q * root, k_t * root)
        if softcap > 0:
            logits = xp.tanh(logits / dt(softcap)) * dt(softcap)
        b = bias(xp, ins, q.shape[2], total, ints)
        biased = logits + b
        work = biased.astype(_PRECISION[SoftmaxPrecision(precision)]) if precision else biased
        probs = xp.where(xp.isneginf(b.max(axis=-1, keepdims=True)), work.dtype.type(0),
                         softmax(xp, work))  # fmt: skip
        qk = (logits, logits, biased, probs)[mode]
        xp.copyto(outs[3], xp.broadcast_to(qk, outs[3].shape), casting="unsafe")
        y = _mm(xp, probs.astype(q.dtype), xp.repeat(values, reps, axis=1))
    if outs[0].ndim == 3:
        y = y.transpose(0, 2, 1, 3).reshape(outs[0].shape)
    xp.copyto(outs[0], y, casting="unsafe")


TABLE = {KernelId.ATTENTION: attention}
