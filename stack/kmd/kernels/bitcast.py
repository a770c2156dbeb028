"""Bit reinterpretation (ONNX BitCast) for any ``xp``: BITCAST.

Y holds X's bytes read as Y's dtype: the two have one shape and one element width (the
descriptors carry both, so the kernel takes no immediates), and every element's bytes are
copied unchanged, little-endian as the device stores them. The copy goes through unsigned
integer views of that width, so no float register ever holds a value: NaN payloads, signed
zeros and subnormals keep their bits on NumPy and CuPy alike. A bool is one byte, copied as
it is (a byte other than 0 or 1 stays that byte).
"""

from __future__ import annotations

from typing import Any

from stack.kmd.kernels.ids import KernelId

#: Element width in bytes -> the unsigned integer dtype the copy goes through.
_WORDS = {1: "uint8", 2: "uint16", 4: "uint32", 8: "uint64"}


def bitcast(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y = X's bits as Y's dtype; X and Y of another shape or element width are a ValueError."""
    x, y = ins[0], outs[0]
    if x.shape != y.shape or x.dtype.itemsize != y.dtype.itemsize:
        raise ValueError(
            f"BitCast X {x.dtype}{x.shape} and Y {y.dtype}{y.shape} differ in shape or width"
        )
    word = _WORDS[x.dtype.itemsize]
    xp.copyto(y.view(word), x.view(word))


TABLE = {KernelId.BITCAST: bitcast}
