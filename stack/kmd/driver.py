"""The KMD's state and one handler per ioctl (called only by KmdDevice after validation).

Thread-safe: one device lock guards the handle tables and the address space; it is never held
while blocking (waiting on a fence, a full ring or a queue reset), because queue workers take
it to release memory references.
"""

from __future__ import annotations

import itertools
import math
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from stack.kmd import cmdbuf
from stack.kmd import ioctl as io
from stack.kmd.cmdbuf import CommandBuffer
from stack.kmd.command import Command, Launch
from stack.kmd.errors import (
    CommandBufferInvalidError,
    DeviceLostError,
    FenceFailedError,
    InvalidArgumentError,
    InvalidHandleError,
)
from stack.kmd.faults import FaultKind, FaultRecord
from stack.kmd.fence import TimelineFence
from stack.kmd.kernels import parallel
from stack.kmd.kernels.ids import KernelId
from stack.kmd.kernels.parallel import WorkerPool
from stack.kmd.kernels.registry import KernelBackend, KernelFn
from stack.kmd.memory import AddressSpace, Allocation
from stack.kmd.queue import CommandQueue
from stack.kmd.submit import Planner


@dataclass(slots=True)
class Context:
    """What one context owns (allocations are found through the address space)."""

    ctx: int
    queues: set[int] = field(default_factory=set)
    fences: set[int] = field(default_factory=set)
    cmdbufs: set[int] = field(default_factory=set)


class Driver:
    """Contexts, memory, queues and fences of one device."""

    def __init__(
        self,
        backend: KernelBackend,
        memory_limit: int,
        threads: int = 1,
        kernels: Callable[[KernelId], KernelFn] | None = None,
    ) -> None:
        self.backend = backend
        self.pool = WorkerPool(threads)
        self.space = AddressSpace(memory_limit)
        self.planner = Planner(backend, kernels)
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._contexts: dict[int, Context] = {}
        self._queues: dict[int, CommandQueue] = {}
        self._fences: dict[int, TimelineFence] = {}
        self._cmdbufs: dict[int, CommandBuffer] = {}
        self._lost: FaultRecord | None = None  # the sticky fault that lost the device
        self._retired = [0, 0, 0]  # submitted, completed, faults of destroyed queues

    # ---------------------------------------------------------------- handles
    def _ctx(self, ctx: int) -> Context:
        c = self._contexts.get(ctx)
        if c is None:
            raise InvalidHandleError(f"no context {ctx}", kind="context", handle=ctx)
        return c

    def _queue(self, ctx: int, queue: int) -> CommandQueue:
        if queue not in self._ctx(ctx).queues:
            raise InvalidHandleError(
                f"context {ctx} has no queue {queue}", kind="queue", handle=queue
            )
        return self._queues[queue]

    def _fence(self, ctx: int, fence: int) -> TimelineFence:
        if fence not in self._ctx(ctx).fences:
            raise InvalidHandleError(
                f"context {ctx} has no fence {fence}", kind="fence", handle=fence
            )
        return self._fences[fence]

    # ---------------------------------------------------------------- contexts
    def create_context(self, a: io.CreateContextArgs) -> int:
        with self._lock:
            ctx = next(self._ids)
            self._contexts[ctx] = Context(ctx)
            return ctx

    def destroy_context(self, a: io.ContextArgs) -> None:
        with self._lock:
            c = self._ctx(a.ctx)
            del self._contexts[a.ctx]
            queues = [self._queues.pop(q) for q in c.queues]
        for q in queues:
            self._retire(q)
        with self._lock:
            for f in c.fences:
                self._fences.pop(f)
            for h in c.cmdbufs:
                cmdbuf.forget(self._cmdbufs.pop(h))
            for alloc in self.space.owned_by(a.ctx):
                self.space.force_unmap(alloc)

    # ---------------------------------------------------------------- memory
    def alloc(self, a: io.AllocArgs) -> int:
        with self._lock:
            self._ctx(a.ctx)
            self.space.reserve(a.nbytes)
            storage = self.backend.alloc(a.nbytes)
            return self.space.map(a.ctx, a.nbytes, a.align, a.host_visible, storage).va

    def free(self, a: io.FreeArgs) -> None:
        with self._lock:
            self._ctx(a.ctx)
            alloc = self.space.unmap(a.ctx, a.va)
            for h in alloc.users:  # exactly the command buffers recorded against it
                buf = self._cmdbufs[h]
                buf.stale, buf.launches = alloc.va, []
                buf.allocs = [x for x in buf.allocs if x is not alloc]

    def write(self, a: io.WriteArgs) -> None:
        with self._lock:
            self._ctx(a.ctx)
            alloc = self.space.lookup(a.ctx, a.va + a.offset, a.data.nbytes)
            alloc.writes += 1
        self.backend.upload(alloc.storage, a.va + a.offset - alloc.va, a.data)

    def read(self, a: io.ReadArgs) -> Any:
        with self._lock:
            self._ctx(a.ctx)
            alloc = self.space.lookup(a.ctx, a.va + a.offset, a.nbytes)
        start = a.va + a.offset - alloc.va
        if a.shape is None or a.dtype is None:
            return self.backend.download(alloc.storage, start, a.nbytes)
        if math.prod(a.shape) * a.dtype.itemsize > a.nbytes:
            raise InvalidArgumentError("shape needs more than nbytes", field="shape")
        return self.backend.to_host(alloc.storage, start, a.shape, a.dtype.numpy)

    def map(self, a: io.MapArgs) -> Any:
        with self._lock:
            self._ctx(a.ctx)
            alloc = self.space.lookup(a.ctx, a.va, 0)
            if alloc.va != a.va or not alloc.host_visible:
                raise InvalidArgumentError(
                    "map takes the base of a host_visible allocation", field="va"
                )
            alloc.mapped = True
            alloc.writes += 1  # what a prepared launch kept from it may change from now on
            return self.backend.host_view(alloc.storage)

    # ---------------------------------------------------------------- queues and fences
    def create_queue(self, a: io.CreateQueueArgs) -> int:
        with self._lock:
            c = self._ctx(a.ctx)
            qid = next(self._ids)
            self._queues[qid] = CommandQueue(
                qid,
                a.ctx,
                release=self._release,
                lane=self.backend.lane(),
                pool=self.pool,
                on_fault=self._on_fault,
            )
            c.queues.add(qid)
            return qid

    def destroy_queue(self, a: io.QueueArgs) -> None:
        with self._lock:
            q = self._queue(a.ctx, a.queue)
            self._contexts[a.ctx].queues.discard(a.queue)
            del self._queues[a.queue]
        self._retire(q)

    def _retire(self, q: CommandQueue) -> None:
        q.close()
        with self._lock:
            self._retired[0] += q.submitted
            self._retired[1] += q.completed
            self._retired[2] += q.faults

    def create_fence(self, a: io.CreateFenceArgs) -> int:
        with self._lock:
            c = self._ctx(a.ctx)
            fid = next(self._ids)
            self._fences[fid] = TimelineFence(fid, a.ctx, a.initial)
            c.fences.add(fid)
            return fid

    def destroy_fence(self, a: io.FenceArgs) -> None:
        with self._lock:
            f = self._fence(a.ctx, a.fence)
            if f.scheduled > f.value and f.failure is None:
                raise InvalidArgumentError(
                    f"fence {a.fence} still has work to signal up to {f.scheduled}", field="fence"
                )
            self._contexts[a.ctx].fences.discard(a.fence)
            del self._fences[a.fence]

    def fence_value(self, a: io.FenceArgs) -> int:
        with self._lock:
            return self._fence(a.ctx, a.fence).value

    def signal_fence(self, a: io.SignalFenceArgs) -> None:
        with self._lock:
            f = self._fence(a.ctx, a.fence)
            if a.value <= f.scheduled:
                raise InvalidArgumentError(
                    f"host signal {a.value} must exceed fence {a.fence}'s scheduled value "
                    f"{f.scheduled}",
                    field="value",
                )
            f.scheduled = a.value
        f.signal(a.value)

    def wait_fence(self, a: io.WaitFenceArgs) -> None:
        with self._lock:
            f = self._fence(a.ctx, a.fence)
            queue = f.signaler
        if queue is not None and a.timeout_s != 0:
            queue.help_until(f, a.value)
        f.wait(a.value, a.timeout_s)

    def on_fence(self, a: io.OnFenceArgs) -> None:
        with self._lock:
            f = self._fence(a.ctx, a.fence)
        f.on_reach(a.value, a.callback)

    # ---------------------------------------------------------------- submission
    def submit(self, a: io.SubmitArgs) -> None:
        with self._lock:
            q, fence, waits = self._targets(a.ctx, a.queue, a.signal, a.wait)
            launches, allocs = self.planner.bind_all(a.blobs, a.ctx, self.space)
            cmd, before = self._command(q, fence, a.signal[1], waits, launches, allocs)
        self._push(q, cmd, before, False)

    def _targets(
        self, ctx: int, queue: int, signal: tuple[int, int], wait: tuple[tuple[int, int], ...]
    ) -> tuple[CommandQueue, TimelineFence, list[tuple[TimelineFence, int]]]:
        """The queue, signal fence and wait fences of a submission, checked (lock held)."""
        if self._lost is not None:
            raise DeviceLostError(
                f"the device is lost ({self._lost.message}): reset a queue to recover it",
                fault=self._lost.to_dict(),
            )
        q = self._queue(ctx, queue)
        fid, value = signal
        fence = self._fence(ctx, fid)
        waits = [(self._fence(ctx, f), v) for f, v in wait] if wait else []
        if q.fault is not None:
            q.check_open()  # raises; push checks again under the queue's lock
        if fence.failure is not None:
            raise FenceFailedError(
                f"fence {fid} has failed; signal a new fence",
                fence=fid,
                value=value,
                fault=fence.failure,
            )
        return q, fence, waits

    def _command(
        self,
        q: CommandQueue,
        fence: TimelineFence,
        value: int,
        waits: list[tuple[TimelineFence, int]],
        launches: list[Launch],
        allocs: list[Allocation],
    ) -> tuple[Command, int]:
        """Schedule the fence and take the memory references (lock held)."""
        before = fence.scheduled
        fence.schedule(value)
        fence.signaler = q
        cmd = Command(launches, fence, value, waits, allocs)
        fid = fence.fid
        for alloc in allocs:
            alloc.inflight += 1
            pending = alloc.pending
            if pending.get(fid, 0) < value:
                pending[fid] = value
        return cmd, before

    def _push(self, q: CommandQueue, cmd: Command, before: int, inline: bool) -> bool:
        try:
            return q.push(cmd, inline)
        except BaseException:
            self._release(cmd)
            with self._lock:
                if cmd.fence.scheduled == cmd.value:
                    cmd.fence.scheduled = before
            raise

    # ---------------------------------------------------------------- command buffers
    def create_cmdbuf(self, a: io.CreateCmdbufArgs) -> int:
        with self._lock:
            c = self._ctx(a.ctx)
            handle = next(self._ids)
            previous = parallel.bind(self.pool)  # preparers size their launches by it
            try:
                buf = cmdbuf.record(handle, a.ctx, a.blobs, self.planner, self.space)
            finally:
                parallel.bind(previous)
            self._cmdbufs[handle] = buf
            c.cmdbufs.add(handle)
            return handle

    def destroy_cmdbuf(self, a: io.CmdbufArgs) -> None:
        with self._lock:
            buf = self._cmdbuf(a.ctx, a.cmdbuf)
            self._contexts[a.ctx].cmdbufs.discard(a.cmdbuf)
            cmdbuf.forget(self._cmdbufs.pop(a.cmdbuf))
        del buf

    def execute_cmdbuf(self, a: io.ExecuteCmdbufArgs) -> bool:
        with self._lock:
            q, fence, waits = self._targets(a.ctx, a.queue, a.signal, a.wait)
            buf = self._cmdbuf(a.ctx, a.cmdbuf)
            if a.rebind:
                previous = parallel.bind(self.pool)  # as when recording
                try:
                    cmdbuf.rebind(buf, a.rebind, self.planner, self.space)
                finally:
                    parallel.bind(previous)
            if buf.stale is not None:
                raise CommandBufferInvalidError(
                    f"command buffer {a.cmdbuf} references 0x{buf.stale:x}, freed since it was "
                    "bound: rebind that allocation or record the buffer again",
                    ctx=a.ctx,
                    cmdbuf=a.cmdbuf,
                    address=buf.stale,
                )
            cmd, before = self._command(q, fence, a.signal[1], waits, buf.launches, buf.allocs)
        return self._push(q, cmd, before, a.inline)

    def _cmdbuf(self, ctx: int, handle: int) -> CommandBuffer:
        if handle not in self._ctx(ctx).cmdbufs:
            raise InvalidHandleError(
                f"context {ctx} has no command buffer {handle}", kind="cmdbuf", handle=handle
            )
        return self._cmdbufs[handle]

    def _release(self, cmd: Command) -> None:
        with self._lock:
            for alloc in cmd.allocs:
                alloc.inflight -= 1
                if alloc.inflight == 0:
                    alloc.pending.clear()

    # ---------------------------------------------------------------- faults and stats
    def inject_fault(self, a: io.InjectFaultArgs) -> None:
        with self._lock:
            q = self._queue(a.ctx, a.queue)
        q.inject(a.kind, a.after)

    def reset_queue(self, a: io.QueueArgs) -> None:
        with self._lock:
            q = self._queue(a.ctx, a.queue)
        q.reset()
        self._recover(q)

    def reset_context(self, a: io.ContextArgs) -> None:
        with self._lock:
            queues = [self._queues[q] for q in self._ctx(a.ctx).queues]
        for q in queues:
            q.reset()
        for q in queues[:1]:
            self._recover(q)

    # ---------------------------------------------------------------- device lost
    def _on_fault(self, fault: FaultRecord) -> None:
        """A queue's command failed: a sticky one puts the whole device in the lost state."""
        if fault.kind is FaultKind.DEVICE_LOST:
            with self._lock:
                self._lost = self._lost or fault

    def _recover(self, q: CommandQueue) -> None:
        """After a reset: leave the lost state if the device works again (the lane says so),
        else DeviceLostError (the state stays: reopen the device)."""
        with self._lock:
            lost = self._lost
        if lost is None:
            return
        q.lane.recover()
        with self._lock:
            self._lost = None

    def stats(self, a: io.StatsArgs) -> io.KmdStats:
        with self._lock:
            qs = list(self._queues.values())
            return io.KmdStats(
                backend=self.backend.name,
                contexts=len(self._contexts),
                queues=len(qs),
                fences=len(self._fences),
                allocations=len(self.space),
                allocated_bytes=self.space.used_bytes,
                peak_bytes=self.space.peak_bytes,
                submitted=self._retired[0] + sum(q.submitted for q in qs),
                completed=self._retired[1] + sum(q.completed for q in qs),
                faults=self._retired[2] + sum(q.faults for q in qs),
            )

    def context_ids(self) -> list[int]:
        """Live context handles (for close)."""
        with self._lock:
            return list(self._contexts)
