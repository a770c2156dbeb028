"""Rotary position embedding (ONNX RotaryEmbedding, opset 23) for any ``xp``: ROTARY_EMBEDDING.

X is [B, H, S, D] (4-D: batch, heads, sequence, head size) or [B, S, H * D] (3-D, the heads
packed in the last axis; ``num_heads`` says H); Y is X's shape and dtype. Per head, the first R
channels (``rotary_embedding_dim``, 0 meaning D) are rotated as R / 2 complex pairs and the
other D - R pass through unchanged: a pair (x1, x2) at sequence place (b, s) becomes

    (cos * x1 - sin * x2,  sin * x1 + cos * x2)

with cos and sin read at that place's angle index k in 0..R/2-1. The pairs are the two halves of
the R channels (x1 = x[..., k], x2 = x[..., R/2 + k]) or, ``interleaved``, the neighbours
(x1 = x[..., 2k], x2 = x[..., 2k + 1]). cos_cache and sin_cache, of X's dtype, are
[P, R / 2] when the optional position_ids [B, S] (an integer tensor) is given, each place
reading row position_ids[b, s], else [B, S, R / 2] read at the place itself. The arithmetic is
float64 for every float dtype, rounded once to X's (the products of float32 or float16 values
are exact in float64), so NumPy and CuPy agree bit for bit. A position id outside [0, P) is a
kernel fault (an IndexError), as is an operand of another dtype or shape, an odd or too large
R, or a 3-D X whose last axis ``num_heads`` does not divide (a ValueError). NaN and infinity
propagate as the products carry them (a NaN channel makes its pair's two outputs NaN).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stack.kmd.kernels.ids import KernelId


def heads_view(t: Any, num_heads: int) -> Any:
    """``t`` as [B, S, H, D]: a 4-D [B, H, S, D] swapped, a 3-D [B, S, H * D] split (views of a
    contiguous tensor, so writing into one writes the tensor)."""
    if t.ndim == 4:
        return t.transpose(0, 2, 1, 3)
    b, s, hidden = t.shape
    return t.reshape(b, s, num_heads, hidden // num_heads)


def rotary_dim(x: Any, y: Any, ints: tuple[int, ...]) -> tuple[int, int, int]:
    """(interleaved, num_heads, R) of the immediates, checked against X and Y (ValueError)."""
    interleaved, num_heads, rot = (*ints, 0, 0, 0)[:3]
    if x.dtype.kind != "f" or x.ndim not in (3, 4):
        raise ValueError(f"RotaryEmbedding X {x.dtype}{x.shape} is not a float 3-D or 4-D tensor")
    if y.dtype != x.dtype or y.shape != x.shape:
        raise ValueError(f"RotaryEmbedding Y {y.dtype}{y.shape} is not X's {x.dtype}{x.shape}")
    if interleaved not in (0, 1) or rot < 0:
        raise ValueError(f"RotaryEmbedding interleaved {interleaved} / rotary dim {rot} invalid")
    if x.ndim == 3 and (num_heads <= 0 or x.shape[2] % num_heads):
        raise ValueError(f"RotaryEmbedding num_heads {num_heads} does not split X {x.shape}")
    head = x.shape[3] if x.ndim == 4 else x.shape[2] // num_heads
    rot = rot or head
    if rot % 2 or rot > head:
        raise ValueError(f"RotaryEmbedding rotary dim {rot} is odd or past head size {head}")
    return interleaved, num_heads, rot


def angles(xp: Any, ins: list[Any], b: int, s: int, half: int) -> tuple[Any, Any]:
    """cos and sin as float64 [B, S, 1, R / 2], gathered through position_ids when given."""
    x, cos, sin = ins[0], ins[1], ins[2]
    for name, c in (("cos_cache", cos), ("sin_cache", sin)):
        if c.dtype != x.dtype:
            raise ValueError(f"RotaryEmbedding {name} is {c.dtype}, not X's {x.dtype}")
    if len(ins) > 3:
        pos = ins[3]
        if pos.dtype.kind not in "iu" or pos.shape != (b, s):
            raise ValueError(f"RotaryEmbedding position_ids {pos.dtype}{pos.shape} is not an "
                             f"integer [{b}, {s}]")  # fmt: skip
        for name, c in (("cos_cache", cos), ("sin_cache", sin)):
            if c.ndim != 2 or c.shape[1] != half:
                raise ValueError(f"RotaryEmbedding {name} {c.shape} is not [P, {half}]")
        if pos.size and bool(((pos < 0) | (pos >= cos.shape[0]) | (pos >= sin.shape[0])).any()):
            raise IndexError(f"RotaryEmbedding position id out of [0, {cos.shape[0]})")
        cos, sin = cos[pos], sin[pos]
    else:
        for name, c in (("cos_cache", cos), ("sin_cache", sin)):
            if c.shape != (b, s, half):
                raise ValueError(f"RotaryEmbedding {name} {c.shape} is not [{b}, {s}, {half}]")
    return (cos.astype(np.float64)[:, :, None, :], sin.astype(np.float64)[:, :, None, :])


def rotary_embedding(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y = X with its first R channels per head rotated by the cached angles; ints: interleaved,
    num_heads, rotary_embedding_dim. An operand that does not fit is a ValueError, a position id
    out of range an IndexError."""
    x, y = ins[0], outs[0]
    interleaved, num_heads, rot = rotary_dim(x, y, ints)
    x4, y4 = heads_view(x, num_heads), heads_view(y, num_heads)
    half = rot // 2
    cos, sin = angles(xp, ins, x4.shape[0], x4.shape[1], half)
    if y.size == 0:
        return
    xr = x4[..., :rot].astype(np.float64)
    if interleaved:
        x1, x2, lo, hi = xr[..., 0::2], xr[..., 1::2], y4[..., 0:rot:2], y4[..., 1:rot:2]
    else:
        x1, x2, lo, hi = xr[..., :half], xr[..., half:], y4[..., :half], y4[..., half:rot]
    with np.errstate(all="ignore"):  # IEEE results (inf * 0, overflow) are the answer
        xp.copyto(lo, cos * x1 - sin * x2, casting="unsafe")
        xp.copyto(hi, sin * x1 + cos * x2, casting="unsafe")
    xp.copyto(y4[..., rot:], x4[..., rot:])


TABLE = {KernelId.ROTARY_EMBEDDING: rotary_embedding}
