"""Data movement kernels: Transpose, Concat, Copy (byte copy), Fill; any ``xp``."""

from __future__ import annotations

from typing import Any

from stack.kmd.kernels.ids import KernelId


def transpose(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y = X.transpose(perm) (empty perm: reverse the axes)."""
    x = ins[0]
    xp.copyto(outs[0], x.transpose(ints if ints else None))


def concat(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y = concatenate(inputs, axis)."""
    xp.concatenate(ins, axis=ints[0], out=outs[0])


def copy(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Byte copy: X's bytes into Y (same byte size, any shapes and dtypes)."""
    src = ins[0].reshape(-1).view(xp.uint8)
    dst = outs[0].reshape(-1).view(xp.uint8)
    if src.size != dst.size:
        raise ValueError(f"COPY of {src.size} bytes into {dst.size}")
    xp.copyto(dst, src)


def fill(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y[...] = value."""
    outs[0].fill(fl[0])


TABLE = {
    KernelId.TRANSPOSE: transpose,
    KernelId.CONCAT: concat,
    KernelId.COPY: copy,
    KernelId.FILL: fill,
}
