"""Broadcasting element-wise kernels (Add with optional ReLU, Mul, Sub, Div, ReLU), any ``xp``."""

from __future__ import annotations

from typing import Any

from stack.kmd.kernels.ids import KernelId


def add(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y = A + B, then ReLU when ints[0]."""
    y = outs[0]
    xp.add(ins[0], ins[1], out=y)
    if ints[0]:
        xp.maximum(y, 0, out=y)


def mul(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y = A * B."""
    xp.multiply(ins[0], ins[1], out=outs[0])


def sub(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y = A - B."""
    xp.subtract(ins[0], ins[1], out=outs[0])


def div(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y = A / B; integers truncate toward zero (C semantics, as ONNX runtimes do)."""
    y = outs[0]
    if y.dtype.kind == "f":
        xp.divide(ins[0], ins[1], out=y)
    else:
        xp.copyto(y, xp.trunc(xp.true_divide(ins[0], ins[1])), casting="unsafe")


def relu(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y = max(X, 0)."""
    xp.maximum(ins[0], 0, out=outs[0])


TABLE = {
    KernelId.ADD: add,
    KernelId.MUL: mul,
    KernelId.SUB: sub,
    KernelId.DIV: div,
    KernelId.RELU: relu,
}
