"""Intra-op parallelism: one launch split along its grid over the device's worker threads.

A device opens with ``threads`` compute threads (``$REFSTACK_THREADS``, default 1): the thread
that executes a command (its queue's worker, or a waiter helping it) and ``threads - 1`` pool
threads. While a command executes, its thread is bound to the device's :class:`WorkerPool`;
a kernel that can split its grid calls :func:`split` with the extent of the grid dimension it
splits (output channels of a convolution, output rows of a GEMM) and a function computing one
contiguous range of it. The ranges are disjoint slices of the output, so the result does not
depend on the thread count. NumPy releases the GIL inside BLAS and copies, so the ranges run at
once; BLAS itself stays at one thread (:mod:`stack.kmd.kernels.blas`), so threads never
oversubscribe the cores. Work below ``min_work`` (multiply-adds or elements) is not split: a
hand-off costs tens of microseconds.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

ENV = "REFSTACK_THREADS"
DEFAULT = 1
#: Below this much work (multiply-adds, or elements copied) a launch runs on one thread.
MIN_WORK = 1 << 20

_local = threading.local()


def threads_from_env() -> int:
    """``$REFSTACK_THREADS`` as a positive count (DEFAULT when unset or not a number)."""
    raw = os.environ.get(ENV, "").strip()
    return max(1, int(raw)) if raw.isdigit() else DEFAULT


class WorkerPool:
    """``threads - 1`` pool threads beside the executing one. Thread-safe; :meth:`close` once
    no launch runs (the device closes it after draining its queues)."""

    def __init__(self, threads: int) -> None:
        if threads < 1:
            raise ValueError(f"threads must be at least 1, got {threads}")
        self.threads = threads
        self.splits = 0  # launches split over more than one thread (for tests and tools)
        self._executor = (
            ThreadPoolExecutor(threads - 1, thread_name_prefix="kmd-intra") if threads > 1 else None
        )

    def run(self, parts: list[Callable[[], None]]) -> None:
        """Run every part, the first on the calling thread; return when all are done, raising
        the first part's exception (after every part has finished)."""
        executor = self._executor
        if executor is None or len(parts) == 1:
            for part in parts:
                part()
            return
        self.splits += 1
        futures: list[Future[None]] = [executor.submit(p) for p in parts[1:]]
        try:
            parts[0]()
        finally:
            errors = [f.exception() for f in futures]
        for error in errors:
            if error is not None:
                raise error

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True)


def bind(pool: WorkerPool | None) -> WorkerPool | None:
    """Bind ``pool`` to the calling thread (None: unbind); returns the previous binding."""
    previous: WorkerPool | None = getattr(_local, "pool", None)
    _local.pool = pool
    return previous


def ways(extent: int, work: int) -> int:
    """How many ranges a launch of ``extent`` grid rows and ``work`` total work is split into
    on this thread's pool (1: run it whole)."""
    pool: WorkerPool | None = getattr(_local, "pool", None)
    if pool is None or pool.threads == 1 or work < MIN_WORK or extent < 2:
        return 1
    return min(pool.threads, extent)


def split(extent: int, work: int, fn: Callable[[int, int], None]) -> None:
    """Call ``fn(lo, hi)`` over ``[0, extent)`` cut into contiguous ranges, one per thread of
    the bound pool (one range when unbound, or when ``work`` is below MIN_WORK)."""
    n = ways(extent, work)
    if n == 1:
        fn(0, extent)
        return
    cuts = [extent * i // n for i in range(n + 1)]
    pool: WorkerPool = _local.pool
    pool.run([_part(fn, cuts[i], cuts[i + 1]) for i in range(n)])


def _part(fn: Callable[[int, int], None], lo: int, hi: int) -> Callable[[], None]:
    return lambda: fn(lo, hi)
