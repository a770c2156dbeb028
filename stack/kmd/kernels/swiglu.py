"""The SwiGLU gated activation (ONNX SwiGLU, opset 28) for any ``xp``: SWIGLU.

A (the gate) and B (the linear value) are one float tensor shape, with no broadcasting, and Y
is their shape and dtype:

    Y = A * sigmoid(alpha * A) * B

the Swish of the gate (UNARY's SWISH, the same ``alpha``) times the value. The arithmetic is
float64 for every float dtype, rounded once to Y's, the sigmoid taken as 1 / (1 + e) or
e / (1 + e) with e = exp(-|alpha * A|) so that no exponential overflows; NumPy and CuPy agree
to float64's rounding of ``exp``. NaN propagates; a gate of -inf (alpha > 0) gives NaN, as
-inf * 0 in ONNX's reference. Operands of another dtype or shape are a kernel fault (a
ValueError).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stack.kmd.kernels.ids import KernelId


def check(a: Any, b: Any, y: Any) -> None:
    """A, B and Y of one float dtype and one shape (ValueError naming the one that is not)."""
    if a.dtype.kind != "f":
        raise ValueError(f"SwiGLU A {a.dtype}{a.shape} is not a float tensor")
    for name, t in (("B", b), ("Y", y)):
        if t.dtype != a.dtype or t.shape != a.shape:
            raise ValueError(f"SwiGLU {name} {t.dtype}{t.shape} is not A's {a.dtype}{a.shape}")


def gated(xp: Any, a: Any, b: Any, alpha: float) -> Any:
    """A * sigmoid(alpha * A) * B in float64 (IEEE results, NaN and infinity, as they fall)."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    with np.errstate(all="ignore"):
        t = alpha * a64
        e = xp.exp(-xp.abs(t))
        sig = xp.where(t >= 0, 1 / (1 + e), e / (1 + e))
        return a64 * sig * b64


def swiglu(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y = A * sigmoid(alpha * A) * B; floats: alpha. Operands that do not fit: ValueError."""
    a, b, y = ins[0], ins[1], outs[0]
    check(a, b, y)
    if y.size:
        xp.copyto(y, gated(xp, a, b, float(fl[0])), casting="unsafe")


TABLE = {KernelId.SWIGLU: swiglu}
