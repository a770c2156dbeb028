"""RotaryEmbedding: its shape and dtype rule (registered into :mod:`stack.compiler.shape_rules`'
registry on import), the check of its operands the importer shares, and its constant-folding
evaluator (registered by :mod:`stack.compiler.evaluate`, since evaluate_ops is at its 300
lines); op_rules, where LayerNormalization's rule is, is at its 300 lines too.

X is a float tensor [B, H, S, D] or [B, S, H * D] (``num_heads`` H, needed by a 3-D X);
cos_cache and sin_cache are of X's dtype, [P, R / 2] when the optional int64 position_ids
[B, S] is given and [B, S, R / 2] otherwise, where R (``rotary_embedding_dim``, 0 meaning the
head size D) is even and at most D; ``interleaved`` is 0 or 1. The result is X's type. Folding
computes as the device kernel does (:mod:`stack.kmd.kernels.rotary_embedding`): each pair of
the first R channels per head (the halves, or neighbours when interleaved) rotated by the
cached cos and sin in float64, rounded once to X's dtype, the other channels copied; a
position id outside [0, P) is left to the device, which reports it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from stack.compiler.ir import ElemType, Node, OpType, TensorType
from stack.compiler.shape_rules import _fail, _need, register

#: The attributes the IR op carries, each an int defaulting to 0.
ROTARY_EMBEDDING_ATTRS = ("interleaved", "num_heads", "rotary_embedding_dim")


def problem(
    x: TensorType,
    cos: TensorType,
    sin: TensorType,
    ids: TensorType | None,
    interleaved: int,
    num_heads: int,
    rot: int,
) -> str | None:
    """What makes these operands and attributes no RotaryEmbedding, or None when they fit."""
    if not x.dtype.is_float or len(x.shape) not in (3, 4):
        return f"takes a float X [B, H, S, D] or [B, S, H * D], got {x}"
    if interleaved not in (0, 1) or num_heads < 0 or rot < 0:
        return (f"takes interleaved 0 or 1 and num_heads and rotary_embedding_dim >= 0, got "
                f"{interleaved}, {num_heads}, {rot}")  # fmt: skip
    if len(x.shape) == 3 and (num_heads == 0 or x.shape[2] % num_heads):
        return f"takes a num_heads that divides the hidden size of the 3-D X {x}, got {num_heads}"
    b, s = (x.shape[0], x.shape[2]) if len(x.shape) == 4 else x.shape[:2]
    head = x.shape[3] if len(x.shape) == 4 else x.shape[2] // num_heads
    rot = rot or head
    if rot % 2 or rot > head:
        return f"takes an even rotary_embedding_dim at most the head size {head}, got {rot}"
    if ids is not None and ids != TensorType(ElemType.I64, (b, s)):
        return f"takes int64 position_ids [{b}, {s}] for X {x}, got {ids}"
    for name, c in (("cos_cache", cos), ("sin_cache", sin)):
        fits = (
            len(c.shape) == 2 and c.shape[1] == rot // 2
            if ids is not None
            else c.shape == (b, s, rot // 2)
        )
        if c.dtype != x.dtype or not fits:
            want = f"[P, {rot // 2}]" if ids is not None else f"[{b}, {s}, {rot // 2}]"
            return f"takes a {name} {x.dtype.value}{want} for X {x}, got {c}"
    return None


@register(OpType.ROTARY_EMBEDDING)
def _rotary_embedding(
    node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]
) -> list:
    x, cos, sin = _need(node, t, 0), _need(node, t, 1), _need(node, t, 2)
    ids = t[3] if len(t) > 3 else None
    why = problem(x, cos, sin, ids, *(node.attr(a, 0) for a in ROTARY_EMBEDDING_ATTRS))
    if why is not None:
        raise _fail(node, f"RotaryEmbedding {why}")
    return [x]


def heads(t: np.ndarray, num_heads: int) -> np.ndarray:
    """``t`` as [B, S, H, D] (a view of a contiguous tensor)."""
    if t.ndim == 4:
        return t.transpose(0, 2, 1, 3)
    return t.reshape(t.shape[0], t.shape[1], num_heads, t.shape[2] // num_heads)


def evaluate(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray] | None:
    """Y of constant operands; declines a position id out of range (the device reports it)."""
    interleaved, num_heads, rot = (int(node.attr(name, 0)) for name in ROTARY_EMBEDDING_ATTRS)
    x, cos, sin = (np.asarray(v) for v in a[:3])
    if len(a) > 3:
        ids = np.asarray(a[3])
        if ids.size and (ids.min() < 0 or ids.max() >= min(cos.shape[0], sin.shape[0])):
            return None
        cos, sin = cos[ids], sin[ids]
    y = np.ascontiguousarray(x).copy()
    x4, y4 = heads(np.ascontiguousarray(x), num_heads), heads(y, num_heads)
    rot = rot or x4.shape[3]
    half = rot // 2
    c, s = cos.astype(np.float64)[:, :, None, :], sin.astype(np.float64)[:, :, None, :]
    xr = x4[..., :rot].astype(np.float64)
    if interleaved:
        x1, x2, lo, hi = xr[..., 0::2], xr[..., 1::2], y4[..., 0:rot:2], y4[..., 1:rot:2]
    else:
        x1, x2, lo, hi = xr[..., :half], xr[..., half:], y4[..., :half], y4[..., half:rot]
    with np.errstate(all="ignore"):  # IEEE results (inf * 0, overflow) are the answer
        np.copyto(lo, c * x1 - s * x2, casting="unsafe")
        np.copyto(hi, s * x1 + c * x2, casting="unsafe")
    return [y]
