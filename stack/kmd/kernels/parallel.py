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

ENV = "REFSTACK_THREADS"
DEFAULT = 1

_local = threading.local()


def threads_from_env() -> int:
    """``$REFSTACK_THREADS`` as a positive count (DEFAULT when unset or not a number)."""
    raw = os.environ.get(ENV, "").strip()
    return max(1, int(raw)) if raw.isdigit() else DEFAULT


class WorkerPool:
    """``threads - 1`` pool threads beside the executing one. :meth:`run` may be called from
    any thread; :meth:`close` once no launch runs (the device closes it after draining its
    queues).

    Each pool thread waits on a lock of its own for its next part and releases another when
    the part is done: a hand-off is two lock releases and two wake-ups, where a
    ``ThreadPoolExecutor`` also makes a future, a work item and a queue entry and waits on a
    condition (2 threads, an empty part each way, the two pools alternating in one process on a
    2-vCPU VM: 44-70 against 60-103 us wall and 31-52 against 51-82 us of CPU per hand-off;
    ``refstack bench model --threads 2`` prints the figure as ``handoff_us``). One launch
    holds the pool threads at a time: a launch on another queue's thread meanwhile runs all
    its parts on its own thread, as it would have waited for the same threads."""

    def __init__(self, threads: int) -> None:
        if threads < 1:
            raise ValueError(f"threads must be at least 1, got {threads}")
        self.threads = threads
        self.splits = 0  # passes run over more than one thread (for tests and tools)
        self.tiles = 0  # grid tiles run (for tests and tools)
        self._held = threading.Lock()  # held by the launch using the pool threads
        self._closed = False
        self._workers = [_Worker(f"kmd-intra-{i}") for i in range(threads - 1)]

    def run(self, parts: list[Callable[[], None]]) -> None:
        """Run every part (at most ``threads``), the first on the calling thread; return when
        all are done, raising the first part's exception (after every part has finished)."""
        if self._closed:
            raise RuntimeError("the worker pool is closed")
        if len(parts) > self.threads:
            raise ValueError(f"{len(parts)} parts for {self.threads} threads")
        workers = self._workers[: len(parts) - 1]
        if workers and not self._held.acquire(blocking=False):
            workers = []  # another launch has the pool threads: every part on this one
        if not workers:
            for part in parts:
                part()
            return
        try:
            self.splits += 1
            for worker, part in zip(workers, parts[1:], strict=True):
                worker.start(part)
            try:
                parts[0]()
            finally:
                errors = [worker.join() for worker in workers]
        finally:
            self._held.release()
        for error in errors:
            if error is not None:
                raise error

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            for worker in self._workers:
                worker.stop()


class _Worker:
    """One pool thread: :meth:`start` hands it a part, :meth:`join` waits for it to finish."""

    def __init__(self, name: str) -> None:
        self._go = threading.Lock()  # released: a part (or the stop) is waiting
        self._done = threading.Lock()  # released: the part has finished
        self._go.acquire()
        self._done.acquire()
        self._part: Callable[[], None] | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._loop, name=name, daemon=True)
        self._thread.start()

    def start(self, part: Callable[[], None]) -> None:
        self._part = part
        self._go.release()

    def join(self) -> BaseException | None:
        """Wait for the part to finish; its exception, if it raised one."""
        self._done.acquire()
        error, self._error = self._error, None
        return error

    def stop(self) -> None:
        self._part = None
        self._go.release()
        self._thread.join()

    def _loop(self) -> None:
        while True:
            self._go.acquire()
            part = self._part
            if part is None:
                return
            try:
                part()
            except BaseException as exc:  # noqa: BLE001 - handed back to the caller by join
                self._error = exc
            self._part = None
            self._done.release()


def bind(pool: WorkerPool | None) -> WorkerPool | None:
    """Bind ``pool`` to the calling thread (None: unbind); returns the previous binding."""
    previous: WorkerPool | None = getattr(_local, "pool", None)
    _local.pool = pool
    return previous


def threads() -> int:
    """The compute threads of the pool bound to the calling thread (1 when none is)."""
    pool: WorkerPool | None = getattr(_local, "pool", None)
    return 1 if pool is None else pool.threads


def tiles() -> int:
    """The tile count bound to the calling thread (:func:`bind_tiles`; 1 when none is)."""
    return int(getattr(_local, "tiles", 1))


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
