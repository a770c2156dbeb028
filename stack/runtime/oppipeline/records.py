"""Typed records of a loaded operator pipeline config (:mod:`stack.runtime.oppipeline.config`).

A :class:`PipelineConfig` is immutable once loaded: the tensors it is given
(:class:`Supplied`), its stages in execution order (:class:`StageSpec`, each consuming and
producing :class:`TensorUse` under :class:`Constraints`) and the tensors it returns. The
linker (:mod:`stack.runtime.oppipeline.link`) and the runner read these; only
:func:`~stack.runtime.oppipeline.config.load_config` builds them from a file.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from pathlib import Path

from stack.umd import DType

MIN_ALIGNMENT = 32  # a warp: seed 004 §3.4
DEFAULT_ALIGNMENT = 64

Shape = tuple[int | None, ...]
#: An attribute value as a stage passes it to its op (the UMD's request vocabulary).
Attr = int | float | str | tuple[int, ...] | tuple[float, ...]


class Affinity(enum.StrEnum):
    """Where a stage runs: on the previous stage's stream, or its own (waiting on producers)."""

    SAME_AS_PREVIOUS = "same_as_previous"
    ASYNC_PRELOAD = "async_preload"


class Fallback(enum.StrEnum):
    """What runs instead of a failed module — only where the config declares it."""

    IDENTITY = "identity"


@dataclass(frozen=True, slots=True)
class TensorUse:
    """A tensor a stage consumes or produces, with the shape it expects (None: any)."""

    name: str
    shape: Shape | None = None
    dtype: DType | None = None


@dataclass(frozen=True, slots=True)
class Supplied:
    """A tensor given to the pipeline: at run time, or from ``file`` (a .npy) when set."""

    name: str
    shape: tuple[int, ...]
    dtype: DType
    file: Path | None = None


@dataclass(frozen=True, slots=True)
class Constraints:
    stream_affinity: Affinity = Affinity.SAME_AS_PREVIOUS
    memory_alignment: int = DEFAULT_ALIGNMENT
    precision_policy: str | None = None
    nan_inf: str | None = None  # "forbidden" tightens the descriptor's rule; None keeps it


@dataclass(frozen=True, slots=True)
class StageSpec:
    index: int
    name: str
    operator: str
    module: str | None
    version: str | None
    inputs: tuple[TensorUse, ...]
    outputs: tuple[TensorUse, ...]
    attrs: tuple[tuple[str, Attr], ...]
    constraints: Constraints
    fallback: Fallback | None

    @property
    def field(self) -> str:
        return f"pipeline[{self.index}]"


@dataclass(frozen=True, slots=True)
class PipelineConfig:
    name: str
    inputs: tuple[Supplied, ...]
    stages: tuple[StageSpec, ...]
    outputs: tuple[str, ...]
    source: str | None = None

    def supplied(self, name: str) -> Supplied | None:
        return next((s for s in self.inputs if s.name == name), None)
