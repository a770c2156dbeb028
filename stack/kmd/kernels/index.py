"""Indexing and shape-changing data movement, any ``xp``: GATHER, GATHER_ELEMENTS, GATHER_ND,
SCATTER_ND, SCATTER_ELEMENTS, REVERSE_SEQUENCE, SLICE, PAD, EXPAND, TILE and CAST.

Index tensors may hold negative indices (counted from the end, as ONNX allows); an index out of
range is a kernel fault. SLICE and PAD take their geometry as an ints list (see the ABI).
SCATTER_ND and SCATTER_ELEMENTS apply their updates in their order, so updates to the same
place combine (or, with no reduction, the last one wins) the same way on every backend.
REVERSE_SEQUENCE is a gather along its time axis of indices built from the lengths.
"""

from __future__ import annotations

import enum
from typing import Any

import numpy as np

from stack.kmd.kernels.ids import KernelId


class PadMode(enum.IntEnum):
    """PAD's ``mode`` (first int of its list). Values are ABI."""

    CONSTANT = 0
    REFLECT = 1
    EDGE = 2
    WRAP = 3


_NP_MODE = {PadMode.REFLECT: "reflect", PadMode.EDGE: "edge", PadMode.WRAP: "wrap"}


class ScatterReduction(enum.IntEnum):
    """SCATTER_ND's and SCATTER_ELEMENTS' ``reduction`` (an int immediate): how an update
    meets the value it lands on. Values are ABI."""

    NONE = 0
    ADD = 1
    MUL = 2
    MAX = 3
    MIN = 4


_COMBINE = {
    ScatterReduction.ADD: "add",
    ScatterReduction.MUL: "multiply",
    ScatterReduction.MAX: "maximum",
    ScatterReduction.MIN: "minimum",
}


def _wrap_indices(xp: Any, idx: Any, n: int) -> Any:
    idx = idx.astype(xp.int64)
    idx = xp.where(idx < 0, idx + n, idx)
    if idx.size and (int(idx.min()) < 0 or int(idx.max()) >= n):
        raise IndexError(f"index out of range for an axis of {n}")
    return idx


def gather(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y = take(data, indices, axis) (ONNX Gather)."""
    data, axis = ins[0], ints[0]
    idx = _wrap_indices(xp, ins[1], data.shape[axis])
    xp.copyto(outs[0], xp.take(data, idx, axis=axis).reshape(outs[0].shape))


def gather_elements(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y = take_along_axis(data, indices, axis) (ONNX GatherElements)."""
    data, axis = ins[0], ints[0]
    idx = _wrap_indices(xp, ins[1], data.shape[axis])
    xp.copyto(outs[0], xp.take_along_axis(data, idx, axis=axis))


def gather_nd(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """ONNX GatherND with ``batch_dims`` (ints[0]): the last axis of ``indices`` addresses the
    leading axes of ``data`` after the batch axes."""
    data, idx, b = ins[0], ins[1], ints[0]
    k = idx.shape[-1]
    batch = int(np.prod(data.shape[:b], dtype=np.int64))
    d = data.reshape((batch, *data.shape[b:]))
    i = idx.reshape((batch, -1, k)).astype(xp.int64)
    dims = xp.asarray(np.array(data.shape[b : b + k], dtype=np.int64))
    i = xp.where(i < 0, i + dims, i)
    if i.size and (bool((i < 0).any()) or bool((i >= dims).any())):
        raise IndexError("GatherND index out of range")
    rows = xp.arange(batch).reshape(batch, 1)
    picked = d[(rows, *(i[..., j] for j in range(k)))]
    xp.copyto(outs[0], picked.reshape(outs[0].shape))


def _rounds(xp: Any, lin: Any) -> list[Any]:
    """The update rows grouped into rounds: round r holds, in order, every row that is the
    (r+1)-th to land on its place, so no place occurs twice in a round and applying the rounds
    one after the other is applying the rows in order."""
    n = lin.shape[0]
    pos = xp.arange(n, dtype=xp.int64)
    order = xp.lexsort(xp.stack([pos, lin]))  # by place, then by position: keys are unique
    placed = lin[order]
    rank = xp.empty_like(pos)
    rank[order] = pos - xp.searchsorted(placed, placed, side="left")
    return [xp.nonzero(rank == r)[0] for r in range(int(rank.max()) + 1)]


def _scatter_into(xp: Any, work: Any, lin: Any, rows: Any, mode: ScatterReduction) -> None:
    """Row ``j`` of ``rows`` lands on ``work[lin[j]]`` in order of ``j``, combined by ``mode``
    with what it lands on (no reduction: the last row wins), round after round (:func:`_rounds`)."""
    for sel in _rounds(xp, lin):
        at = lin[sel]
        if mode is ScatterReduction.NONE:
            work[at] = rows[sel]
        else:
            work[at] = getattr(xp, _COMBINE[mode])(work[at], rows[sel])


def scatter_nd(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """ONNX ScatterND: Y = data with ``updates`` written at the places ``indices`` names (its
    last axis addresses data's leading axes), combined by ``reduction`` (ints[0]); repeated
    places take the updates in order (no reduction: the last one)."""
    data, idx, upd = ins
    mode = ScatterReduction(ints[0] if ints else 0)
    k = idx.shape[-1]
    if k > data.ndim or upd.shape != (*idx.shape[:-1], *data.shape[k:]):
        raise ValueError(
            f"ScatterND shapes data{data.shape} indices{idx.shape} updates{upd.shape} disagree"
        )
    n, places, tail = (
        int(np.prod(s, dtype=np.int64)) for s in (idx.shape[:-1], data.shape[:k], data.shape[k:])
    )
    dims = xp.asarray(np.array(data.shape[:k], dtype=np.int64))
    i = idx.reshape(n, k).astype(xp.int64)
    i = xp.where(i < 0, i + dims, i)
    if i.size and (bool((i < 0).any()) or bool((i >= dims).any())):
        raise IndexError("ScatterND index out of range")
    # row-major place of each update row among the places data's leading k axes address
    strides = np.cumprod((1, *data.shape[1:k][::-1]), dtype=np.int64)[::-1][:k]
    lin = (i * xp.asarray(strides.copy())).sum(axis=1)
    work = data.reshape(places, tail).copy()
    if n and places and tail:
        _scatter_into(xp, work, lin, upd.reshape(n, tail), mode)
    xp.copyto(outs[0], work.reshape(outs[0].shape))


def scatter_elements(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """ONNX ScatterElements: Y = data with each element of ``updates`` written on ``axis``
    (ints[0]) at the place its index names, combined by ``reduction`` (ints[1]); repeated places
    take the updates in row-major order of ``indices`` (no reduction: the last one)."""
    data, idx, upd = ins
    axis, mode = ints[0] if ints else 0, ScatterReduction(ints[1] if len(ints) > 1 else 0)
    short = all(
        i <= n for d, (i, n) in enumerate(zip(idx.shape, data.shape, strict=False)) if d != axis
    )
    if idx.ndim != data.ndim or upd.shape != idx.shape or not short:
        raise ValueError(
            f"ScatterElements shapes data{data.shape} indices{idx.shape} updates{upd.shape} "
            "disagree"
        )
    n = data.shape[axis]
    at = idx.astype(xp.int64)
    at = xp.where(at < 0, at + n, at)
    if at.size and (bool((at < 0).any()) or bool((at >= n).any())):
        raise IndexError("ScatterElements index out of range")
    # row-major place in data of each element of indices, its axis coordinate replaced
    strides = np.cumprod((1, *data.shape[:0:-1]), dtype=np.int64)[::-1]
    lin = xp.zeros(idx.shape, dtype=xp.int64)
    for d in range(idx.ndim):
        shape = [1] * idx.ndim
        shape[d] = idx.shape[d]
        coord = at if d == axis else xp.arange(idx.shape[d], dtype=xp.int64).reshape(shape)
        lin = lin + coord * int(strides[d])
    lin = lin.reshape(-1)
    work = data.reshape(-1).copy()
    if lin.size and work.size:
        _scatter_into(xp, work, lin, upd.reshape(-1), mode)
    xp.copyto(outs[0], work.reshape(outs[0].shape))


def reverse_sequence(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """ONNX ReverseSequence: for batch b (on ``batch_axis``, ints[1]) the first
    ``sequence_lens[b]`` places of X on ``time_axis`` (ints[0]) reversed, the others copied;
    the axes are 0 and 1. A length outside [0, T] is an IndexError."""
    x, lens, y = ins[0], ins[1], outs[0]
    time_axis = ints[0] if ints else 0
    batch_axis = ints[1] if len(ints) > 1 else 1
    axes_ok = x.ndim >= 2 and {time_axis, batch_axis} == {0, 1}
    if not axes_ok or y.shape != x.shape or lens.shape != (x.shape[batch_axis],):
        raise ValueError(
            f"ReverseSequence shapes X{x.shape} sequence_lens{lens.shape} Y{y.shape} with "
            f"time_axis {time_axis}, batch_axis {batch_axis} disagree"
        )
    steps = x.shape[time_axis]
    n = lens.astype(xp.int64).reshape(-1, 1)
    if n.size and (int(n.min()) < 0 or int(n.max()) > steps):
        raise IndexError(f"ReverseSequence lengths must lie in [0, {steps}]")
    t = xp.arange(steps, dtype=xp.int64).reshape(1, -1)
    src = xp.where(t < n, n - 1 - t, t)  # [B, T]: the time step each output place reads
    src = (src.T if time_axis == 0 else src).reshape(x.shape[:2] + (1,) * (x.ndim - 2))
    xp.copyto(y, xp.take_along_axis(x, xp.broadcast_to(src, x.shape), axis=time_axis))


def slice_(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y = X[start:stop:step, ...]: ints are (start, stop, step) per axis of X, already clamped
    (a negative stop means "past index 0" for a negative step)."""
    x = ins[0]
    index = tuple(slice(ints[3 * i], ints[3 * i + 1], ints[3 * i + 2]) for i in range(x.ndim))
    xp.copyto(outs[0], x[index])


def pad(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """ONNX Pad: ints are (mode, begin_0 .. begin_n-1, end_0 .. end_n-1), floats (value,);
    negative pads crop."""
    x, mode = ins[0], PadMode(ints[0])
    n = x.ndim
    begin, end = ints[1 : 1 + n], ints[1 + n : 1 + 2 * n]
    crop = tuple(
        slice(-b if b < 0 else 0, x.shape[i] + e if e < 0 else x.shape[i])
        for i, (b, e) in enumerate(zip(begin, end, strict=True))
    )
    x = x[crop]
    widths = tuple((max(b, 0), max(e, 0)) for b, e in zip(begin, end, strict=True))
    if mode is PadMode.CONSTANT:
        out = xp.pad(x, widths, mode="constant", constant_values=x.dtype.type(fl[0]))
    else:
        out = xp.pad(x, widths, mode=_NP_MODE[mode])
    xp.copyto(outs[0], out)


def expand(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y = X broadcast to Y's shape."""
    xp.copyto(outs[0], xp.broadcast_to(ins[0], outs[0].shape))


def tile(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y = X repeated ``ints[i]`` times along axis i."""
    xp.copyto(outs[0], xp.tile(ins[0], tuple(ints)))


def cast(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y = X converted to Y's dtype (C conversion: floats truncate toward zero into integers,
    non-zero is true)."""
    x, y = ins[0], outs[0]
    if y.dtype.kind == "b":
        xp.copyto(y, x != 0)
    else:
        with np.errstate(invalid="ignore"):  # NaN / out-of-range floats: C leaves it undefined
            xp.copyto(y, x, casting="unsafe")


TABLE = {
    KernelId.GATHER: gather,
    KernelId.GATHER_ELEMENTS: gather_elements,
    KernelId.GATHER_ND: gather_nd,
    KernelId.SCATTER_ND: scatter_nd,
    KernelId.SCATTER_ELEMENTS: scatter_elements,
    KernelId.REVERSE_SEQUENCE: reverse_sequence,
    KernelId.SLICE: slice_,
    KernelId.PAD: pad,
    KernelId.EXPAND: expand,
    KernelId.TILE: tile,
    KernelId.CAST: cast,
}
