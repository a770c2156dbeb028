"""What a pipeline run returns: its outputs and a report of what each stage did."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from stack.runtime.oppipeline.buffers import BufferEvent
from stack.runtime.oppipeline.schedule import StageEvent, overlapped
from stack.umd import PoolStats


@dataclass(frozen=True, slots=True)
class StageOutcome:
    stage: str
    operator: str
    status: str  # "ok" | "fallback" | "failed"
    error: str | None = None


@dataclass(frozen=True, slots=True)
class RunReport:
    """What one run did: each stage's outcome (config order; stages that ran), every buffer
    event, the pool after the run, and the stages' started/completed events as observed."""

    stages: tuple[StageOutcome, ...]
    buffers: tuple[BufferEvent, ...]
    fallbacks: int
    pool: PoolStats
    timeline: tuple[StageEvent, ...] = ()

    def overlapped(self, a: str, b: str) -> bool:
        """Whether stages ``a`` and ``b`` ran at once (each started before the other ended)."""
        return overlapped(self.timeline, a, b)


@dataclass(frozen=True, slots=True)
class PipelineResult:
    outputs: dict[str, np.ndarray]
    report: RunReport
