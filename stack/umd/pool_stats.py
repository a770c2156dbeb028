"""Statistics of a session's memory pool, and the warning when it holds far more than it needs.

Counts, all in bytes:

- ``allocated``: what the pool holds from the KMD — allocations and binned blocks in use, plus
  released blocks cached in their bins;
- ``in_use``: allocations and blocks handed out (a block counts its whole bin size);
- ``requested``: what callers asked for, of ``in_use``;
- ``peak``: the working set of the current window (one pipeline run): the high-water mark of
  ``in_use`` above its value when the window began;
- ``fragmentation``: ``(in_use - requested) / in_use`` — the share of the handed-out bytes lost
  to rounding up to a bin (0.0 when nothing is in use).

Warning (seed 004 §5.3): at the end of each window, ``allocated > 1.5 × peak`` is checked; when
it holds for :data:`WARN_AFTER` windows in a row (memory not released, or cached in bins the
work no longer uses) one warning is logged on ``stack.umd.pool`` and counted, once per streak.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

#: allocated / peak above this ratio is suspicious ...
WARN_RATIO = 1.5
#: ... when it lasts this many windows in a row.
WARN_AFTER = 3

log = logging.getLogger("stack.umd.pool")


@dataclass(frozen=True, slots=True)
class PoolStats:
    """A snapshot of a pool's counters (see the module docstring for each)."""

    allocated_bytes: int
    in_use_bytes: int
    requested_bytes: int
    cached_bytes: int
    peak_bytes: int
    fragmentation: float
    blocks_in_use: int
    cached_blocks: int
    hits: int
    misses: int
    over_peak_windows: int
    warnings: int

    def to_dict(self) -> dict[str, int | float]:
        return {k: getattr(self, k) for k in self.__slots__}


class Usage:
    """The mutable counters behind :class:`PoolStats`; the pool calls it under its lock."""

    __slots__ = (
        "baseline",
        "held",
        "hits",
        "in_use",
        "misses",
        "peak",
        "requested",
        "streak",
        "warnings",
    )

    def __init__(self) -> None:
        self.held = self.in_use = self.requested = 0
        self.baseline = self.peak = 0
        self.hits = self.misses = self.streak = self.warnings = 0

    def taken(self, block: int, request: int, *, fresh: int, binned: bool = True) -> None:
        """``block`` bytes handed out for ``request``; ``fresh`` of them are new memory; a binned
        request counts as a hit (served from a bin) or a miss."""
        self.in_use += block
        self.requested += request
        self.held += fresh
        if binned:
            if fresh:
                self.misses += 1
            else:
                self.hits += 1
        self.peak = max(self.peak, self.in_use - self.baseline)

    def given_back(self, block: int, request: int, *, dropped: int) -> None:
        """A block returned; ``dropped`` of it went back to the KMD (the rest stays cached)."""
        self.in_use -= block
        self.requested -= request
        self.held -= dropped

    def dropped(self, nbytes: int) -> None:
        """Cached bytes freed to the KMD."""
        self.held -= nbytes

    def begin_window(self) -> None:
        self.baseline = self.in_use
        self.peak = 0

    def end_window(self) -> bool:
        if self.held > WARN_RATIO * self.peak:
            self.streak += 1
            if self.streak == WARN_AFTER:
                self.warnings += 1
                log.warning(
                    "memory pool holds %d bytes, above %.1f x the run's peak of %d bytes for %d "
                    "runs in a row: memory not released, or cached in bins no longer used "
                    "(trim the pool)",
                    self.held, WARN_RATIO, self.peak, WARN_AFTER,
                )  # fmt: skip
                return True
        else:
            self.streak = 0
        return False

    def snapshot(self, blocks: int, cached_blocks: int) -> PoolStats:
        frag = (self.in_use - self.requested) / self.in_use if self.in_use else 0.0
        return PoolStats(
            allocated_bytes=self.held,
            in_use_bytes=self.in_use,
            requested_bytes=self.requested,
            cached_bytes=self.held - self.in_use,
            peak_bytes=self.peak,
            fragmentation=round(frag, 6),
            blocks_in_use=blocks,
            cached_blocks=cached_blocks,
            hits=self.hits,
            misses=self.misses,
            over_peak_windows=self.streak,
            warnings=self.warnings,
        )
