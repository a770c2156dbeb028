"""Intra-op parallelism: one launch cut into the tiles its launch configuration encodes, the
tiles run over the device's worker threads.

A device opens with ``threads`` compute threads (``$REFSTACK_THREADS``, default 1): the thread
that executes a command (its queue's worker, or a waiter helping it) and ``threads - 1`` pool
threads. While a command executes, its thread is bound to the device's :class:`WorkerPool`
(:func:`bind`), and before each launch to that launch's tile count (:func:`bind_tiles`: the
``grid[0]`` the UMD encoded in the blob's launch configuration).

The CPU meaning of a launch configuration (the GPU reads block sizes instead):

* ``grid[0]`` = **tiles**: the kernel's *grid axis* (named per kernel in its ABI:
  :attr:`stack.kmd.kernels.abi.KernelAbi.grid`) is cut into that many contiguous tiles of
  near-equal size (clamped to 1..extent). A kernel computes one tile at a time, epilogue
  included, so a tile is the unit that stays in cache;
* the tiles are shared out over ``min(threads, tiles)`` **workers**, each taking a contiguous run
  of tiles (the first run on the executing thread); ``tiles = 1`` runs the launch whole on the
  executing thread;
* helper passes of the same launch (im2col copies, gathers) split into one range per worker
  (:func:`split`).

The ranges are disjoint slices of the output, so results do not depend on the tile or thread
count. NumPy releases the GIL inside BLAS and copies, so the workers run at once; BLAS itself
stays at one thread (:mod:`stack.kmd.kernels.blas`), so workers never oversubscribe the cores.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

ENV = "REFSTACK_THREADS"
DEFAULT = 1

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
        self.splits = 0  # passes run over more than one thread (for tests and tools)
        self.tiles = 0  # grid tiles run (for tests and tools)
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


def bind_tiles(tiles: int) -> None:
    """Set the tile count of the launch about to run on this thread (its ``grid[0]``)."""
    _local.tiles = tiles


def whole() -> bool:
    """Whether the launch running on this thread is one tile; if so it is counted as run and
    the kernel takes its untiled path (no per-tile closures: small launches stay cheap)."""
    if getattr(_local, "tiles", 1) > 1:
        return False
    pool: WorkerPool | None = getattr(_local, "pool", None)
    if pool is not None:
        pool.tiles += 1
    return True


def cuts(extent: int, parts: int) -> list[int]:
    """Boundaries of ``extent`` cut into ``parts`` near-equal contiguous ranges."""
    return [extent * i // parts for i in range(parts + 1)]


def _workers(tiles: int) -> int:
    pool: WorkerPool | None = getattr(_local, "pool", None)
    return 1 if pool is None else max(1, min(pool.threads, tiles))


def grid(extent: int, fn: Callable[[int, int], None]) -> None:
    """Call ``fn(lo, hi)`` once per tile of the launch's grid axis ``[0, extent)``, the tiles
    shared out in contiguous runs over the workers (see the module docstring)."""
    tiles = min(getattr(_local, "tiles", 1), extent)
    pool: WorkerPool | None = getattr(_local, "pool", None)
    if tiles <= 1:
        if pool is not None:
            pool.tiles += 1
        fn(0, extent)
        return
    if pool is not None:
        pool.tiles += tiles
    bounds = cuts(extent, tiles)
    workers = _workers(tiles)
    if workers == 1:
        for t in range(tiles):
            fn(bounds[t], bounds[t + 1])
        return
    runs = cuts(tiles, workers)
    assert pool is not None
    pool.run([_run_tiles(fn, bounds, runs[i], runs[i + 1]) for i in range(workers)])


def split(extent: int, fn: Callable[[int, int], None]) -> None:
    """Call ``fn(lo, hi)`` over ``[0, extent)`` cut into one contiguous range per worker of the
    current launch (a helper pass: copies, gathers)."""
    n = min(_workers(getattr(_local, "tiles", 1)), extent)
    if n <= 1:
        fn(0, extent)
        return
    bounds = cuts(extent, n)
    pool: WorkerPool = _local.pool
    pool.run([_run_tiles(fn, bounds, i, i + 1) for i in range(n)])


def _run_tiles(
    fn: Callable[[int, int], None], bounds: list[int], first: int, last: int
) -> Callable[[], None]:
    def run() -> None:
        for t in range(first, last):
            fn(bounds[t], bounds[t + 1])

    return run
