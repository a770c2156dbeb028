"""The records passed between pipeline stages 3 → 4 → 5.

Stage 3 (semantic parse, :mod:`stack.umd.translators`) turns a request into a
:class:`Semantic`: the kernel calls to make, in order, in the layouts and dtypes the kernels
take — a layout conversion is a TRANSPOSE call into a scratch buffer. Stage 4 checks the
primary call's output shapes against shape inference and computes each call's launch
configuration; stage 5 encodes each call through its :class:`~stack.umd.templates.KernelTemplate`.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

from stack.kmd.dtypes import DType
from stack.kmd.kernels.ids import KernelId
from stack.umd.ops import AttrValue


@dataclass(frozen=True, slots=True)
class Operand:
    """A tensor as a kernel sees it; ``ref`` indexes inputs, then outputs, then scratch buffers."""

    ref: int
    shape: tuple[int, ...]
    dtype: DType

    @property
    def nbytes(self) -> int:
        return math.prod(self.shape) * self.dtype.itemsize


@dataclass(frozen=True, slots=True)
class KernelCall:
    """One kernel launch before encoding: params in ABI order (the first ``n_in`` are read)."""

    kernel_id: KernelId
    params: tuple[Operand, ...]
    n_in: int
    attrs: Mapping[str, AttrValue] = field(default_factory=dict)

    def i(self, name: str) -> int:
        """An int attribute the translator set (KeyError/TypeError if it did not)."""
        value = self.attrs[name]
        if not isinstance(value, int):
            raise TypeError(f"attribute {name} is not an int")
        return value

    @property
    def ins(self) -> tuple[Operand, ...]:
        return self.params[: self.n_in]

    @property
    def outs(self) -> tuple[Operand, ...]:
        return self.params[self.n_in :]


@dataclass(frozen=True, slots=True)
class Semantic:
    """Stage 3's result: calls in execution order, scratch buffer sizes, index of the op's call.

    ``out_fields`` names, for each output param of the primary call, the request field it came
    from (``outputs[0].shape``), so stage 4 reports shape mismatches against the request.
    """

    calls: tuple[KernelCall, ...]
    scratch: tuple[int, ...] = ()
    primary: int = 0
    out_fields: tuple[str, ...] = ()

    @property
    def main(self) -> KernelCall:
        return self.calls[self.primary]
