"""Einstein summation (ONNX Einsum, opset 12) for any ``xp``: EINSUM.

The kernel takes no equation string: the UMD resolves ONNX's ``equation`` against the static
shapes and encodes it as the int list ``subscripts``, one label per axis: the labels of input
0's axes, then input 1's, ..., then the output's (each operand's count is its rank, read from
its param). A label is an int >= 0 (the UMD gives the equation's letters a-z, A-Z the labels
0..51 and the axes an ellipsis stands for 52, 53, ..., numbered from the left of the broadcast
batch); the kernel names the distinct labels by letters in the order they first appear, so at
most 52 distinct labels fit. Every axis of one label has the label's size, or 1, broadcast to it
(the UMD allows 1 only on an ellipsis axis, as ONNX); an output label appears once in the output
and on some input; a label on the inputs alone is summed over.

Y[out] = sum over the summed labels of the product of the inputs, computed wide - float64 for
float16, float32 and float64, int64 for int32 and int64 - and written once to Y's dtype (an
integer result wraps as two's complement, as it would accumulating in the narrow type), so NumPy
and CuPy agree to float64's rounding and exactly on integers. A sum over an empty axis is 0; NaN
and infinity propagate as the products carry them. Operands of another dtype than Y's, a
subscripts list that does not match the ranks, or labels whose sizes clash are kernel faults (a
ValueError).
"""

from __future__ import annotations

import string
from typing import Any

import numpy as np

from stack.kmd.kernels.ids import KernelId

#: The dtypes the kernel computes (numpy names), each with its wide accumulation dtype.
WIDE = {"float16": np.float64, "float32": np.float64, "float64": np.float64,
        "int32": np.int64, "int64": np.int64}  # fmt: skip


def equation(
    shapes: list[tuple[int, ...]], out: tuple[int, ...], subscripts: tuple[int, ...]
) -> tuple[str, dict[int, int]]:
    """The letter equation of ``subscripts`` for operands of ``shapes`` and an output of shape
    ``out``, and each label's size; a ValueError when they do not fit."""
    ranks = [len(s) for s in shapes] + [len(out)]
    if len(subscripts) != sum(ranks) or any(s < 0 for s in subscripts):
        raise ValueError(f"Einsum subscripts {list(subscripts)} are not one label >= 0 per axis "
                         f"of operands of ranks {ranks}")  # fmt: skip
    names: dict[int, str] = {}
    for label in subscripts:
        if label not in names:
            if len(names) == len(string.ascii_letters):
                raise ValueError(f"Einsum takes at most {len(names)} distinct labels")
            names[label] = string.ascii_letters[len(names)]
    terms: list[str] = []
    sizes: dict[int, int] = {}
    at = 0
    for shape in [*shapes, out]:
        labels = subscripts[at : at + len(shape)]
        at += len(shape)
        terms.append("".join(names[lb] for lb in labels))
        if shape is out:
            continue
        own = {lb: n for lb, n in zip(labels, shape, strict=True)}
        for lb, n in zip(labels, shape, strict=True):
            have = sizes.get(lb, n)
            if (have != n and 1 not in (have, n)) or own[lb] != n:
                raise ValueError(f"Einsum label {lb} has sizes {have} and {n}")
            sizes[lb] = n if have == 1 else have
    out_labels = subscripts[sum(ranks[:-1]) :]
    if len(set(out_labels)) != len(out_labels) or any(lb not in sizes for lb in out_labels):
        raise ValueError(f"Einsum output labels {list(out_labels)} repeat or are on no input")
    want = tuple(sizes[lb] for lb in out_labels)
    if want != tuple(out):
        raise ValueError(f"Einsum Y {tuple(out)} is not {want}")
    return ",".join(terms[:-1]) + "->" + terms[-1], sizes


def einsum(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Y = the Einstein sum of the inputs over the labels ``ints`` (see the module docstring);
    operands that do not fit are a ValueError."""
    y = outs[0]
    if y.dtype.name not in WIDE or any(x.dtype != y.dtype for x in ins):
        raise ValueError(f"Einsum takes operands of one dtype of {sorted(WIDE)}, got "
                         f"{[str(x.dtype) for x in ins]} -> {y.dtype}")  # fmt: skip
    eq, sizes = equation([tuple(x.shape) for x in ins], tuple(y.shape), ints)
    if y.size == 0:
        return
    wide, ops, at = WIDE[y.dtype.name], [], 0
    for x in ins:
        labels = ints[at : at + x.ndim]
        at += x.ndim
        full = tuple(sizes[lb] for lb in labels)
        if len(set(labels)) != len(labels):  # a repeated label (a diagonal) is not broadcast
            full = tuple(x.shape)
        ops.append(xp.broadcast_to(x.astype(wide, copy=False), full))
    with np.errstate(all="ignore"):  # IEEE results (inf * 0, overflow) are the answer
        xp.copyto(y, xp.einsum(eq, *ops, optimize=True), casting="unsafe")


TABLE = {KernelId.EINSUM: einsum}
