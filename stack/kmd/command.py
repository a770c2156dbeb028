"""What a submit puts in a queue's ring (the command and its resolved kernel launches), and
how a queue executes one: on its worker thread or on a waiting thread that helps."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from stack.kmd.blob import LaunchConfig
from stack.kmd.faults import FaultKind, FaultRecord
from stack.kmd.fence import TimelineFence
from stack.kmd.kernels import current_launch, parallel
from stack.kmd.kernels.lane import HOST, Lane
from stack.kmd.kernels.parallel import WorkerPool
from stack.kmd.kernels.registry import Preparer, kept_inputs, prepares_tiled
from stack.kmd.memory import Allocation

KernelFn = Callable[[list[Any], list[Any], tuple[int, ...], tuple[float, ...]], None]


def _nothing() -> None:
    """The call of a launch whose outputs are all empty."""


@dataclass(slots=True, eq=False)
class Launch:
    """One kernel launch with its tensors resolved to backend array views."""

    kernel: str
    fn: KernelFn
    ins: list[Any]
    outs: list[Any]
    ints: tuple[int, ...]
    floats: tuple[float, ...]
    addrs: tuple[int, ...]
    #: ``grid[0]`` of the blob's launch configuration: the tiles of the kernel's grid axis.
    tiles: int = 1
    #: The blob's whole launch configuration: GPU kernels read its block
    #: (:mod:`stack.kmd.kernels.current_launch`, :mod:`stack.kmd.kernels.gpu_tiles`).
    config: LaunchConfig = current_launch.DEFAULT
    #: The kernel's preparer when this launch is recorded in a command buffer (untiled only,
    #: unless the preparer takes tiled launches): :mod:`stack.kmd.kernels.prepared_np`.
    prepare: Preparer | None = field(default=None, repr=False)
    #: The allocation of each input, and the distinct allocations the outputs lie in (their
    #: ``writes`` are counted after the launch runs).
    sources: tuple[Allocation, ...] = field(default=(), repr=False)
    written: tuple[Allocation, ...] = field(default=(), repr=False)
    #: ``fn`` with its arguments bound, made once: a launch is cached and replayed per submit;
    #: or the closure its preparer made.
    call: Callable[[], None] = field(init=False, repr=False)
    #: Whether ``call`` is a prepared closure (it runs the launch whole, as one tile, or on
    #: threads of its own).
    prepared: bool = field(init=False, default=False)

    def __post_init__(self) -> None:
        if all(out.size == 0 for out in self.outs):
            # Every output has zero elements: there is nothing to compute or write, and a
            # kernel need not handle the degenerate shapes (Conv of a batch of 0, ...).
            self.call = _nothing
            return
        run = None
        if self.prepare is not None and (self.tiles <= 1 or prepares_tiled(self.prepare)):
            previous = parallel.tiles()
            parallel.bind_tiles(self.tiles)
            try:
                run = self.prepare(self.ins, self.outs, self.ints, self.floats)
            finally:
                parallel.bind_tiles(previous)
        kernel = functools.partial(self.fn, self.ins, self.outs, self.ints, self.floats)
        kept = kept_inputs(self.prepare) if run is not None and self.prepare else ()
        kept_allocs = tuple(dict.fromkeys(self.sources[i] for i in kept if i < len(self.sources)))
        if any(a.mapped for a in kept_allocs):  # the host may write it unseen: never kept
            run = None
        elif run is not None and kept_allocs:
            run = self._guarded(run, kernel, kept_allocs)
        self.prepared = run is not None
        self.call = run or kernel

    def _guarded(self, run: Callable[[], None], kernel: Callable[[], None],
                 kept: tuple[Allocation, ...]) -> Callable[[], None]:  # fmt: skip
        """``run`` while the inputs its preparer copied are unwritten since; after a write into
        one of their allocations, the kernel from then on (as an unprepared launch)."""
        seen = tuple(a.writes for a in kept)

        def fall_back() -> None:
            self.call, self.prepared = kernel, False
            parallel.bind_tiles(self.tiles)
            kernel()

        if len(kept) == 1:  # the common case: W and B in the constant segment
            alloc, count = kept[0], seen[0]

            def call_one() -> None:
                if alloc.writes == count:
                    run()
                else:
                    fall_back()

            return call_one

        def call() -> None:
            if tuple(a.writes for a in kept) == seen:
                run()
            else:
                fall_back()

        return call


@dataclass(slots=True, eq=False)
class Command:
    """What one submit put in the ring."""

    launches: list[Launch]
    fence: TimelineFence
    value: int
    waits: list[tuple[TimelineFence, int]]
    allocs: list[Allocation] = field(default_factory=list)
    queued: float = 0.0  # monotonic time it was pushed


def blocked(cmd: Command) -> bool:
    """Whether ``cmd`` still waits on a fence that has neither been reached nor failed."""
    return any(f.failure is None and f.value < v for f, v in cmd.waits)


def execute(
    cmd: Command,
    injected: FaultKind | None,
    cancel: threading.Event,
    lane: Lane,
    ctx: int,
    qid: int,
    pool: WorkerPool | None = None,
) -> FaultRecord | None:
    """Run ``cmd`` of queue ``qid``: wait for its fences (ended by ``cancel``), apply an injected
    fault, else run the launches in ``lane`` (with ``pool`` bound for grid splits) and await
    the lane; the fault (KERNEL, or DEVICE_LOST for a sticky device error), or None."""

    for fence, value in cmd.waits:
        while fence.value < value and not fence.poll(value, 0.05):
            if fence.failure is not None:
                msg = f"waited-on fence {fence.fid} failed: {fence.failure.message}"
                return fault_record(cmd, ctx, qid, FaultKind.DEPENDENCY, msg)
            if cancel.is_set():
                return fault_record(cmd, ctx, qid, FaultKind.RESET, "dropped by queue reset")
    if injected is not None:
        return _injected(cmd, injected, cancel, ctx, qid)
    launch = None
    previous = parallel.bind(pool)
    try:
        if lane is HOST:  # synchronous kernels: nothing to enter or await
            whole = 0
            bind_tiles = parallel.bind_tiles
            for launch in cmd.launches:
                if launch.prepared:  # one tile, decided at record time
                    whole += 1
                else:
                    bind_tiles(launch.tiles)
                launch.call()
                for alloc in launch.written:
                    alloc.writes += 1
            if whole and pool is not None:
                pool.tiles += whole
        else:
            with lane:  # this queue's stream on a GPU
                for launch in cmd.launches:
                    current_launch.bind(launch.config)
                    launch.call()
                    for alloc in launch.written:
                        alloc.writes += 1
            lane.complete()  # waits for this lane's work only, never the whole device
    except Exception as exc:  # noqa: BLE001 - not swallowed: it becomes the fence fault
        name = launch.kernel if launch is not None else None
        msg = f"{type(exc).__name__}: {exc}"
        kind = FaultKind.DEVICE_LOST if lane.lost(exc) else FaultKind.KERNEL
        return fault_record(cmd, ctx, qid, kind, msg, None, name)
    finally:
        parallel.bind(previous)
    return None


def _injected(
    cmd: Command, injected: FaultKind, cancel: threading.Event, ctx: int, qid: int
) -> FaultRecord | None:
    """The fault an injection makes of ``cmd`` (HANG: after the queue's reset ends it)."""
    if injected is FaultKind.HANG:
        cancel.wait()
        return fault_record(cmd, ctx, qid, FaultKind.HANG, "command hung; ended by queue reset")
    if injected is FaultKind.ECC:
        msg = "uncorrectable ECC error during command"
        return fault_record(cmd, ctx, qid, FaultKind.ECC, msg)
    if injected is FaultKind.BAD_ADDRESS:
        bad = max((a.end for a in cmd.allocs), default=0) + 8
        msg = f"access to 0x{bad:x}"
        return fault_record(cmd, ctx, qid, FaultKind.BAD_ADDRESS, msg, bad)
    return None


def fault_record(
    cmd: Command,
    ctx: int,
    qid: int,
    kind: FaultKind,
    message: str,
    address: int | None = None,
    kernel: str | None = None,
) -> FaultRecord:
    """The fault of ``cmd`` (naming its first kernel unless ``kernel`` is given)."""
    if kernel is None and cmd.launches:
        kernel = cmd.launches[0].kernel
    return FaultRecord(kind, ctx, qid, cmd.fence.fid, cmd.value, message, address, kernel)
