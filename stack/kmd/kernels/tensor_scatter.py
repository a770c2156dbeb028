"""ONNX TensorScatter (the KV-cache update) for any ``xp``: TENSOR_SCATTER.

The cache ``past[B, ..., L, ...]`` (sequence axis ``axis``, never the batch axis 0) takes the
``S`` steps of ``update`` (the cache's shape but ``S <= L`` on the axis) of batch ``b`` at
``write_indices[b] + s`` (0 when the input is absent). In ``linear`` mode every write must land
inside the cache (a write index below 0 or past ``L - S`` is a kernel fault); in ``circular``
mode the place is taken modulo ``L``. The ``S`` places of one batch are distinct, so one
advanced-index assignment writes them on every backend.
"""

from __future__ import annotations

import enum
from typing import Any

from stack.kmd.kernels.ids import KernelId


class TensorScatterMode(enum.IntEnum):
    """TENSOR_SCATTER's ``mode`` (its second int immediate). Values are ABI."""

    LINEAR = 0
    CIRCULAR = 1


def tensor_scatter(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y = past_cache with update's steps written on ``axis`` (ints[0]) from each batch's write
    index, ``mode`` (ints[1]) linear or circular."""
    past, upd = ins[0], ins[1]
    axis = ints[0] if ints else past.ndim - 2
    mode = TensorScatterMode(ints[1] if len(ints) > 1 else 0)
    fits = upd.ndim == past.ndim and 0 < axis < past.ndim
    if (
        not fits
        or upd.shape[axis] > past.shape[axis]
        or any(
            u != p for d, (u, p) in enumerate(zip(upd.shape, past.shape, strict=True)) if d != axis
        )
    ):
        raise ValueError(
            f"TensorScatter shapes past_cache{past.shape} update{upd.shape} axis {axis} disagree"
        )
    batch, cache, steps = past.shape[0], past.shape[axis], upd.shape[axis]
    if len(ins) > 2:
        if ins[2].shape != (batch,):
            raise ValueError(f"TensorScatter write_indices{ins[2].shape} must be ({batch},)")
        start = ins[2].astype(xp.int64).reshape(-1, 1)
    else:
        start = xp.zeros((batch, 1), dtype=xp.int64)
    at = start + xp.arange(steps, dtype=xp.int64).reshape(1, -1)  # [B, S]
    if mode is TensorScatterMode.CIRCULAR:
        at = at % cache if cache else at
    elif at.size and (int(at.min()) < 0 or int(at.max()) >= cache):
        raise IndexError(f"TensorScatter linear writes must lie in [0, {cache})")
    y = outs[0]
    xp.copyto(y, past)
    if at.size and y.size:
        rows = xp.arange(batch, dtype=xp.int64).reshape(-1, 1)
        xp.moveaxis(y, axis, 1)[rows, at] = xp.moveaxis(upd, axis, 1)


TABLE = {KernelId.TENSOR_SCATTER: tensor_scatter}
