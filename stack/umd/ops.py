"""The request vocabulary of the UMD: op kinds, layouts, tensor descriptors and op requests.

These records are the in-process form of ``contracts/umd.proto``'s ``OpType``, ``Layout``,
``TensorDesc`` and ``OpRequest``; the values of :class:`OpKind` equal ``OpType`` and the KMD's
``KernelId`` for the ops that map one to one.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Mapping
from dataclasses import dataclass

from stack.kmd.dtypes import DType

#: An attribute value: scalars, strings and flat tuples of numbers (ONNX-like).
AttrValue = int | float | str | tuple[int, ...] | tuple[float, ...]


class OpKind(enum.IntEnum):
    """The op vocabulary of requests and of Executables; values equal proto ``OpType``."""

    GEMM = 1
    MATMUL = 2
    CONV2D = 3
    BATCHNORM = 4
    ADD = 5
    MUL = 6
    RELU = 7
    SOFTMAX = 8
    LAYERNORM = 9
    MAXPOOL = 10
    AVGPOOL = 11
    GLOBALAVGPOOL = 12
    QUANTIZE = 13
    DEQUANTIZE = 14
    MATMUL_INTEGER = 15
    QLINEARMATMUL = 16
    TRANSPOSE = 17
    CONCAT = 18
    COPY = 19
    SUB = 20
    DIV = 21
    FILL = 22
    UNARY = 23
    BINARY = 24
    WHERE = 25
    CAST = 26
    REDUCE = 27
    ARG_REDUCE = 28
    CUMSUM = 29
    TOPK = 30
    GATHER = 31
    GATHER_ELEMENTS = 32
    SLICE = 33
    PAD = 34
    EXPAND = 35
    TILE = 36


class Layout(enum.IntEnum):
    """Memory layout of a 4-D activation; ``ANY`` for tensors where it does not matter."""

    ANY = 0
    NCHW = 1
    NHWC = 2


@dataclass(frozen=True, slots=True)
class TensorDesc:
    """A tensor in device memory: where it is (``addr``, a device VA), its shape, dtype, layout.

    The UMD never dereferences ``addr``; it checks that ``[addr, addr + byte_size)`` lies inside
    one of the session's allocations and writes it into the instruction blob.
    """

    addr: int
    shape: tuple[int, ...]
    dtype: DType
    layout: Layout = Layout.ANY

    @property
    def byte_size(self) -> int:
        """``prod(shape) * dtype.itemsize`` (a scalar, ``shape == ()``, holds one element)."""
        return math.prod(self.shape) * self.dtype.itemsize


def _norm_attr(value: object) -> AttrValue:
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float | str):
        return value
    if isinstance(value, list | tuple):
        items = tuple(int(v) if isinstance(v, bool) else v for v in value)
        if all(isinstance(v, int) for v in items):
            return items
        return tuple(float(v) for v in items)
    raise TypeError(f"attribute value {value!r} is not an int, float, str or tuple of numbers")


@dataclass(frozen=True, slots=True)
class OpRequest:
    """One op to translate: what it is, its operand tensors and its attributes.

    ``attrs`` is sorted by name so that equal requests compare (and hash) equal; build it with
    :meth:`make`, which normalises lists to tuples and bools to ints.
    """

    op: OpKind
    inputs: tuple[TensorDesc, ...]
    outputs: tuple[TensorDesc, ...]
    attrs: tuple[tuple[str, AttrValue], ...] = ()

    @classmethod
    def make(
        cls,
        op: OpKind,
        inputs: tuple[TensorDesc, ...] | list[TensorDesc],
        outputs: tuple[TensorDesc, ...] | list[TensorDesc],
        **attrs: object,
    ) -> OpRequest:
        """Build a request with normalised, name-sorted attributes."""
        return cls(op, tuple(inputs), tuple(outputs), normalize_attrs(attrs))

    def attr_map(self) -> dict[str, AttrValue]:
        return dict(self.attrs)


def normalize_attrs(attrs: Mapping[str, object]) -> tuple[tuple[str, AttrValue], ...]:
    """Sorted ``(name, value)`` pairs with lists as tuples and bools as ints."""
    return tuple(sorted((str(k), _norm_attr(v)) for k, v in attrs.items()))
