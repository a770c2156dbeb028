"""Command queues: a ring buffer with a write pointer and a doorbell, drained by one worker.

The submitter writes a :class:`Command` at the write pointer and rings the doorbell; the
queue's worker thread executes commands strictly in order: it waits for each command's
``waits`` fences, runs its launches, releases its memory references, then signals its fence.
A fault stops the queue: the failing command's fence fails with the fault, the pending ones
are dropped (their fences fail too, so nothing hangs) and submissions are refused with
QueueFaultedError until :meth:`CommandQueue.reset`. A thread waiting on a fence may run the
ready commands itself (:meth:`CommandQueue.help_until`) instead of sleeping. Fence callbacks run
on the thread that completes the command: they must not reset or destroy their own queue.

The doorbell only wakes a worker that sleeps: a queue used within the last ``HOT_S`` seconds
keeps its worker polling the ring every ``POLL_S`` instead, so a submit followed by a wait on
the same queue (the waiter runs the command itself) involves no other thread at all.
"""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from typing import Any

from stack.kmd.command import Command, blocked, execute, fault_record
from stack.kmd.errors import InvalidHandleError, QueueFaultedError, QueueFullError
from stack.kmd.faults import FaultKind, FaultRecord
from stack.kmd.fence import TimelineFence
from stack.kmd.kernels.lane import HOST, Lane
from stack.kmd.kernels.parallel import WorkerPool

POLL_S = 0.001  # ring poll period of a worker whose queue was used recently
HOT_S = 0.05  # after this long without a submit, the worker sleeps until the doorbell rings


class CommandQueue:
    """A ring of ``capacity`` commands and the worker thread that executes them."""

    def __init__(
        self,
        qid: int,
        ctx: int,
        *,
        release: Callable[[Command], None],
        lane: Lane = HOST,
        pool: WorkerPool | None = None,
        on_fault: Callable[[FaultRecord], None] | None = None,
        capacity: int = 1024,
        submit_timeout_s: float = 30.0,
    ) -> None:
        self.qid, self.ctx, self.capacity = qid, ctx, capacity
        self.fault: FaultRecord | None = None
        self.submitted = self.completed = self.faults = 0
        self._release = release
        self._on_fault = on_fault
        self.lane = lane
        self._pool = pool
        self._submit_timeout_s = submit_timeout_s
        self._ring: list[Command | None] = [None] * capacity
        self._rptr = self._wptr = 0
        self._busy = False
        self._closed = False
        self._sleepers = 0  # threads blocked on the condition until notified (not polling)
        self._urgent = False  # the worker should take the head command at once
        self._used_at = 0.0  # monotonic time of the latest push
        self._inject: list[list[Any]] = []  # [kind, commands to let through first]
        self._cancel = threading.Event()
        self._cv = threading.Condition(threading.Lock())
        self._worker = threading.Thread(target=self._run, name=f"kmd-queue-{qid}", daemon=True)
        self._worker.start()

    @property
    def write_pointer(self) -> int:
        """Commands ever written (monotonic); ring slot = pointer % capacity."""
        return self._wptr

    @property
    def read_pointer(self) -> int:
        """Commands ever retired (monotonic)."""
        return self._rptr

    def push(self, cmd: Command, inline: bool = False) -> bool:
        """Write ``cmd`` at the write pointer and ring the doorbell (blocks while full).

        ``inline``: when the queue is idle (nothing pending or running, no injection) and
        ``cmd`` waits on nothing unreached, run it on the calling thread before returning —
        exactly as the worker would (same faults, same completion). True when it ran here and
        signalled its fence (so the caller need not ask the fence)."""
        with self._cv:
            if self._closed:
                raise InvalidHandleError(
                    f"queue {self.qid} is destroyed", kind="queue", handle=self.qid
                )
            self._raise_if_faulted()
            if self._wptr - self._rptr >= self.capacity:
                self._sleep_until(
                    lambda: self._wptr - self._rptr < self.capacity or self.fault is not None,
                    self._submit_timeout_s,
                )
                self._raise_if_faulted()
                if self._wptr - self._rptr >= self.capacity:
                    raise QueueFullError(f"queue {self.qid} ring stayed full", queue=self.qid)
            here = (
                inline
                and self._rptr == self._wptr
                and not self._busy
                and not self._inject
                and not self._cancel.is_set()
                and (not cmd.waits or not blocked(cmd))
            )
            self._ring[self._wptr % self.capacity] = cmd
            self._wptr += 1
            self.submitted += 1
            self._used_at = cmd.queued = time.monotonic()
            if here:
                self._busy = True
            elif self._sleepers:
                self._urgent = True
                self._cv.notify_all()  # the doorbell (a polling worker sees the command anyway)
        if not here:
            return False
        fault = self._execute(cmd, None)
        self._complete(cmd, fault)
        return fault is None

    def check_open(self) -> None:
        """QueueFaultedError when the queue is stopped on a fault."""
        with self._cv:
            self._raise_if_faulted()

    def inject(self, kind: FaultKind, after: int) -> None:
        """Make the command that runs after ``after`` more successful ones fail with ``kind``."""
        with self._cv:
            self._inject.append([kind, after])

    def reset(self) -> None:
        """Drop pending work (fences fail with RESET), end a hang, clear the fault state.

        Synchronous: on return no command of this queue runs or waits, and every fence they
        were to signal has been signalled or failed.
        """
        with self._cv:
            self._cancel.set()
            dropped = self._take_pending()
        self._finish_dropped(dropped, None)
        with self._cv:
            self._sleep_until(lambda: not self._busy)
            self.fault = None
            self._inject.clear()
            self._cancel.clear()

    def close(self) -> None:
        """Refuse further pushes, reset, then stop the worker thread."""
        with self._cv:
            self._closed = True
        self.reset()
        with self._cv:
            self._cv.notify_all()
        self._worker.join()

    def _sleep_until(self, predicate: Callable[[], bool], timeout: float | None = None) -> None:
        """``wait_for`` on the condition (held), counted so that state changes notify."""
        self._sleepers += 1
        try:
            self._cv.wait_for(predicate, timeout)
        finally:
            self._sleepers -= 1

    def _raise_if_faulted(self) -> None:
        if self.fault is not None:
            raise QueueFaultedError(
                f"queue {self.qid} stopped on {self.fault.kind.name}: reset_queue first",
                queue=self.qid,
                fault=self.fault,
            )

    def _take_pending(self) -> list[Command]:
        start = self._rptr + (1 if self._busy else 0)
        dropped = [self._ring[i % self.capacity] for i in range(start, self._wptr)]
        for i in range(start, self._wptr):
            self._ring[i % self.capacity] = None
        self._wptr = start
        return [c for c in dropped if c is not None]

    def _finish_dropped(self, dropped: list[Command], cause: FaultRecord | None) -> None:
        for cmd in dropped:
            self._release(cmd)
            if cause is None:
                record = self._record(cmd, FaultKind.RESET, "dropped by queue reset")
            else:
                record = dataclasses.replace(
                    cause,
                    fence=cmd.fence.fid,
                    value=cmd.value,
                    message=f"dropped after an earlier command faulted: {cause.message}",
                )
            cmd.fence.fail(record)

    def help_until(self, fence: TimelineFence, value: int, depth: int = 0) -> None:
        """Work-conserving wait: run this queue's ready commands on the calling thread, in ring
        order, until ``fence`` reaches ``value``, helping the queues they wait on first (a few
        levels deep). Return early (waking the worker for what is left) when the worker is busy,
        the queue empty, stopped or resetting, an injection pending, or the next command still
        waits. A command runs exactly as on the worker (same faults, same completion)."""
        while fence.value < value and fence.failure is None:
            with self._cv:
                cmd = self._head()
                claimed = cmd is not None and not blocked(cmd)
                if claimed:
                    self._busy = True
            if claimed:
                assert cmd is not None
                self._complete(cmd, self._execute(cmd, None))
                continue
            if cmd is not None and depth < 4:  # blocked on another queue: help that queue
                for f, v in cmd.waits:
                    if f.value < v and f.signaler is not None and f.signaler is not self:
                        f.signaler.help_until(f, v, depth + 1)
                if not blocked(cmd):
                    continue
            with self._cv:
                if self._rptr != self._wptr:
                    self._urgent = True
                    self._cv.notify_all()  # what is left needs the worker now
            return

    def _head(self) -> Command | None:
        """The command at the read pointer if a helper may run it now (condition held)."""
        if (
            self._busy
            or self._rptr == self._wptr
            or self.fault is not None
            or self._inject
            or self._closed
            or self._cancel.is_set()
        ):
            return None
        return self._ring[self._rptr % self.capacity]

    def _run(self) -> None:
        while True:
            with self._cv:
                if not self._await_work():
                    return
                cmd = self._ring[self._rptr % self.capacity]
                assert cmd is not None
                self._busy = True
                self._urgent = False
                injected = self._take_injection()
            self._complete(cmd, self._execute(cmd, injected))

    def _await_work(self) -> bool:
        """Wait (condition held) until the worker should take the command at the read pointer;
        False once the queue is closed and drained. A command younger than ``POLL_S`` is left to
        a waiter that may run it itself, unless a sleeping worker was rung, a helper handed it
        over, or it cannot be helped (an injection pending, the queue closing or resetting)."""
        while True:
            if not self._busy and self._rptr < self._wptr:
                head = self._ring[self._rptr % self.capacity]
                young = POLL_S - (time.monotonic() - head.queued) if head is not None else 0.0
                if young <= 0 or self._urgent or self._inject or self._closed:
                    return True
                if self._cancel.is_set():
                    return True
                self._cv.wait(young)
            elif not self._busy and self._closed:
                return False
            elif time.monotonic() - self._used_at < HOT_S:
                self._cv.wait(POLL_S)  # hot: poll, so submitters need not notify
            else:
                self._sleepers += 1
                self._cv.wait()
                self._sleepers -= 1

    def _complete(self, cmd: Command, fault: FaultRecord | None) -> None:
        """Retire the command at the read pointer: release memory, then signal or fail."""
        self._release(cmd)
        if fault is None:
            cmd.fence.signal(cmd.value)
        else:
            with self._cv:
                self.fault = fault
                self.faults += 1
                dropped = self._take_pending()
            if self._on_fault is not None:
                self._on_fault(fault)
            cmd.fence.fail(fault)
            self._finish_dropped(dropped, fault)
        with self._cv:
            self._ring[self._rptr % self.capacity] = None
            self._rptr += 1
            self.completed += fault is None
            self._busy = False
            if self._sleepers:
                self._cv.notify_all()

    def _take_injection(self) -> FaultKind | None:
        for entry in self._inject:
            if entry[1] == 0:
                self._inject.remove(entry)
                return FaultKind(entry[0])
        for entry in self._inject:
            entry[1] -= 1
        return None

    def _execute(self, cmd: Command, injected: FaultKind | None) -> FaultRecord | None:
        return execute(cmd, injected, self._cancel, self.lane, self.ctx, self.qid, self._pool)

    def _record(self, cmd: Command, kind: FaultKind, message: str) -> FaultRecord:
        return fault_record(cmd, self.ctx, self.qid, kind, message)
