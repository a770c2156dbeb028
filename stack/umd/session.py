"""A UMD session: one KMD context with its memory pool, cache view and command queues.

Thread safety: every method may be called from any thread; a stream's submissions are
serialised by its lock (so fence values stay in submission order).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

import numpy as np

from stack.kmd.device import KmdDevice
from stack.kmd.dtypes import DType
from stack.kmd.errors import BackendUnavailableError
from stack.umd.cache import CacheStats, CacheView, KernelCache
from stack.umd.commands import flatten
from stack.umd.errors import (
    AddressError,
    ClosedError,
    InvalidRequestError,
    StreamNotFoundError,
)
from stack.umd.ids import format_session_id
from stack.umd.kmd_errors import kmd_call
from stack.umd.ops import OpRequest
from stack.umd.pipeline import Pipeline, Translated
from stack.umd.pool import MemoryPool
from stack.umd.pool_stats import PoolStats
from stack.umd.program import Program

#: The hot path's KMD-call guard, made once (it holds no state).
_EXECUTE_CALL = kmd_call("execute_cmdbuf")


@dataclass(frozen=True, slots=True)
class Ticket:
    """Completion handle of one submit: done when ``stream``'s fence reaches ``value``."""

    stream: int
    fence: int
    value: int


@dataclass(frozen=True, slots=True)
class SessionStats:
    allocations: int
    bytes: int
    streams: int
    cache: CacheStats


class _Stream:
    __slots__ = ("fence", "lock", "next", "pending", "queue", "reached")

    def __init__(self, queue: int, fence: int) -> None:
        self.queue = queue
        self.fence = fence
        self.next = 1
        self.reached = 0  # fence value known reached (an execution completed inline)
        self.lock = threading.Lock()
        self.pending: list[tuple[int, tuple[int, ...]]] = []  # (fence value, scratch to free)


class UmdSession:
    """The runtime's (and the service's) handle on the device.

    Lifetime: created by :meth:`stack.umd.driver.Umd.create_session`; :meth:`close` (or
    KeepAlive expiry in the service) destroys the KMD context, which drains its queues and
    frees every allocation, queue and fence the session held.
    """

    def __init__(
        self,
        key: int,
        device: KmdDevice,
        pipeline: Pipeline,
        cache: KernelCache[Program],
        keepalive_timeout_s: float | None = None,
    ) -> None:
        self.key = key
        self.session_id = format_session_id(key)
        self.device = device
        self.keepalive_timeout_s = keepalive_timeout_s
        self.last_seen = time.monotonic()
        self._pipeline = pipeline
        with kmd_call("create_context"):
            self.ctx = device.create_context()
        self.pool = MemoryPool(device, self.ctx)
        self.cache = CacheView(cache)
        self._streams: dict[int, _Stream] = {}
        self._scratch_live: set[int] = set()
        self._lock = threading.Lock()
        self.closed = False
        #: Called (no arguments) after the context is destroyed: owners of per-session state
        #: (the service's shared-memory regions, its replay cache) release it here.
        self.on_close: list[Callable[[], None]] = []

    # -- memory ---------------------------------------------------------------------------
    def alloc(self, nbytes: int, align: int = 64) -> int:
        """Allocate device memory owned by the session (sync); returns its VA."""
        self._check_open()
        with kmd_call("alloc"):
            return self.pool.alloc(nbytes, align)

    def free(self, addr: int) -> None:
        """Free an allocation (sync); refused while submitted, unfinished work uses it."""
        self._check_open()
        with kmd_call("free"):
            self.pool.free(addr)

    def acquire_block(self, nbytes: int, *, stage: Hashable = None, align: int = 64) -> int:
        """A size-binned block of at least ``nbytes`` from the session's pool (sync), reused from
        its bin when one is cached, tagged with ``stage``; returns its VA. Contents are
        undefined. Lives until :meth:`release_block`, :meth:`release_stage` or close."""
        self._check_open()
        with kmd_call("alloc"):
            return self.pool.acquire(nbytes, stage=stage, align=align)

    def release_block(self, addr: int) -> None:
        """Return a block to its bin (sync). The caller first waits on the tickets of the work
        that uses it: the memory is not freed, so the KMD cannot refuse a release in use."""
        self._check_open()
        with kmd_call("free"):
            self.pool.release(addr)

    def release_stage(self, stage: Hashable) -> int:
        """Release every block still tagged ``stage`` (as :meth:`release_block`); how many."""
        self._check_open()
        with kmd_call("free"):
            return self.pool.release_stage(stage)

    def trim_pool(self) -> int:
        """Free the pool's cached blocks to the KMD (sync); returns the bytes freed."""
        self._check_open()
        with kmd_call("free"):
            return self.pool.trim()

    def begin_pool_window(self) -> None:
        """Start a pool measurement window (one pipeline run): its peak counts from here."""
        self.pool.begin_window()

    def end_pool_window(self) -> bool:
        """End the window; True when the pool's 1.5 × peak warning fired with it."""
        return self.pool.end_window()

    def pool_stats(self) -> PoolStats:
        """The pool's counters: allocated, in use, peak, fragmentation, bin hits (non-blocking)."""
        return self.pool.stats()

    def write(self, addr: int, array: np.ndarray | bytes, offset: int = 0) -> None:
        """Copy host bytes into device memory (sync; wait on tickets that read it first)."""
        if self.closed:
            self._check_open()
        data = array
        if isinstance(array, np.ndarray) and not array.flags.c_contiguous:
            data = np.ascontiguousarray(array)
        with kmd_call("write"):
            self.device.write(self.ctx, addr, data, offset)

    def read(self, addr: int, shape: tuple[int, ...], dtype: DType) -> np.ndarray:
        """Copy device memory to a new array (sync; wait on the writer's ticket first)."""
        if self.closed:
            self._check_open()
        with kmd_call("read"):
            return self.device.read_array(self.ctx, addr, tuple(shape), dtype)

    def map(self, addr: int, shape: tuple[int, ...], dtype: DType) -> np.ndarray | None:
        """A host array of ``shape``/``dtype`` aliasing device memory at ``addr`` (sync), or None
        when the device has no host mappings (then use write/read). Writes through it are seen
        by work submitted afterwards and reads see finished work — order them with tickets as
        write/read. Valid until the allocation is freed or the session closed. AddressError
        when the range is not inside one allocation of this session."""
        self._check_open()
        nbytes = math.prod(shape) * dtype.itemsize
        base = self.pool.base_of(addr, nbytes)
        if base is None:
            raise AddressError(f"0x{addr:x}+{nbytes} is not inside one allocation", field="addr")
        try:
            storage = self.device.map(self.ctx, base)
        except BackendUnavailableError:
            return None
        start = addr - base
        view: np.ndarray = storage[start : start + nbytes].view(dtype.numpy).reshape(shape)
        return view

    def read_bytes(self, addr: int, nbytes: int, offset: int = 0) -> bytes:
        self._check_open()
        with kmd_call("read"):
            return self.device.read(self.ctx, addr, nbytes, offset)

    # -- translation ----------------------------------------------------------------------
    def translate(self, req: OpRequest) -> Translated:
        """Stages 1–5 for one op (sync, no device work); errors name the request field."""
        self._check_open()
        return self._pipeline.translate(req, self.pool, self.cache, self._alloc_scratch)

    def infer_shapes(self, req: OpRequest) -> tuple[tuple[int, ...], ...]:
        """The output shapes ``req``'s op produces from its inputs (sync, pure: no device work;
        addresses and output shapes are not looked at). Errors name the request field."""
        self._check_open()
        return self._pipeline.infer_shapes(req)

    def translate_batch(self, reqs: Sequence[OpRequest]) -> list[Translated]:
        """Translate ops in order; a failure names ``ops[i]`` and frees the batch's scratch."""
        out: list[Translated] = []
        try:
            for i, req in enumerate(reqs):
                try:
                    out.append(self.translate(req))
                except InvalidRequestError as exc:
                    exc.field = f"ops[{i}].{exc.field}"
                    exc.details["field"] = exc.field
                    exc.message = f"ops[{i}]: {exc.message}"
                    exc.args = (exc.message,)
                    raise
        except BaseException:
            self._release_scratch(tuple(a for t in out for a in t.scratch))
            raise
        return out

    def _alloc_scratch(self, nbytes: int) -> int:
        va = self.alloc(nbytes, 256)
        with self._lock:
            self._scratch_live.add(va)
        return va

    def _release_scratch(self, addrs: tuple[int, ...]) -> None:
        for va in addrs:
            with self._lock:
                self._scratch_live.discard(va)
            self.pool.free(va)

    # -- streams and submission -----------------------------------------------------------
    def create_stream(self) -> int:
        """A new in-order stream (a KMD queue and a timeline fence); returns its id."""
        self._check_open()
        with kmd_call("create_queue"):
            queue = self.device.create_queue(self.ctx)
            fence = self.device.create_fence(self.ctx, 0)
        with self._lock:
            sid = len(self._streams)
            self._streams[sid] = _Stream(queue, fence)
        return sid

    def ticket(self, stream: int, value: int) -> Ticket:
        """A ticket for an already issued fence value of a stream (e.g. one a client kept)."""
        return Ticket(stream, self._stream(stream).fence, value)

    def queue_of(self, stream: int) -> int:
        """The KMD queue handle behind a stream (for fault injection in tests)."""
        return self._stream(stream).queue

    def _stream(self, stream: int) -> _Stream:
        s = self._streams.get(stream)
        if s is None:
            raise StreamNotFoundError(f"no stream {stream} in session {self.session_id}")
        return s

    def submit(self, stream: int, ops: Sequence[Translated], wait: Sequence[Ticket] = ()) -> Ticket:
        """Stage 6: put the ops' blobs on the stream's queue as one command buffer (async).

        The queue first waits for every ticket in ``wait`` (any stream of this session), runs
        the blobs in order, then signals the returned ticket. Refusals (bad blob or address, a
        faulted queue) raise synchronously; execution faults surface in :meth:`wait`.
        """
        if self.closed:
            self._check_open()
        s = self._streams.get(stream) or self._stream(stream)
        blobs, scratch = flatten(ops)
        if scratch:
            with self._lock:
                if not self._scratch_live.issuperset(scratch):
                    raise InvalidRequestError(
                        "a translation with conversion scratch was already submitted", field="ops"
                    )
                self._scratch_live.difference_update(scratch)
        waits = [(t.fence, t.value) for t in wait] if wait else ()
        with s.lock:
            value = s.next
            with kmd_call("submit"):
                self.device.submit(self.ctx, s.queue, blobs, signal=(s.fence, value), wait=waits)
            s.next = value + 1
            if scratch:
                s.pending.append((value, scratch))
        if len(s.pending) > 1:
            self._reclaim(s)
        return Ticket(stream, s.fence, value)

    # -- reusable command buffers -----------------------------------------------------------
    def record(self, ops: Sequence[Translated]) -> int:
        """Record the ops' blobs once as a KMD command buffer (sync: validated and bound here);
        returns its handle for :meth:`execute`. It lives until :meth:`release` or close.
        Translations owning conversion scratch (freed after one submission) are refused:
        InvalidRequestError(field="ops")."""
        self._check_open()
        blobs, scratch = flatten(ops)
        if scratch:
            raise InvalidRequestError(
                "a translation with conversion scratch cannot be recorded", field="ops"
            )
        with kmd_call("create_cmdbuf"):
            return self.device.create_cmdbuf(self.ctx, blobs)

    def execute(
        self,
        stream: int,
        cmdbuf: int,
        wait: Sequence[Ticket] = (),
        *,
        rebind: Sequence[tuple[int, int]] = (),
        inline: bool = False,
    ) -> Ticket:
        """One execution of a recorded buffer on ``stream`` (async, as :meth:`submit`; inline:
        run on this thread when the stream is idle). ``rebind``: (old, new) allocation bases
        the KMD re-points the buffer to, for this and later executions. A buffer referencing a
        freed allocation is refused (DeviceRefusedError) unless that allocation is rebound."""
        if self.closed:
            self._check_open()
        s = self._streams.get(stream) or self._stream(stream)
        waits = [(t.fence, t.value) for t in wait] if wait else ()
        with s.lock:
            value = s.next
            fence = s.fence
            with _EXECUTE_CALL:
                ran = self.device.execute_cmdbuf(
                    self.ctx, s.queue, cmdbuf, signal=(fence, value), wait=waits,
                    rebind=rebind, inline=inline,
                )  # fmt: skip
            s.next = value + 1
            if ran:
                s.reached = value
        return Ticket(stream, fence, value)

    def release(self, cmdbuf: int) -> None:
        """Destroy a recorded buffer (executions already queued still run)."""
        self._check_open()
        with kmd_call("destroy_cmdbuf"):
            self.device.destroy_cmdbuf(self.ctx, cmdbuf)

    def wait(self, ticket: Ticket, timeout_s: float | None = None) -> None:
        """Block until the ticket's work ran (sync); DeviceFaultError / UmdTimeoutError."""
        if self.closed:
            self._check_open()
        s = self._streams.get(ticket.stream) or self._stream(ticket.stream)
        with kmd_call("wait_fence"):
            self.device.wait_fence(self.ctx, ticket.fence, ticket.value, timeout_s)
        if s.pending:
            self._reclaim(s)

    def on_done(self, ticket: Ticket, callback: Callable[[], None]) -> None:
        """Call ``callback()`` once the ticket's fence is reached or has failed — at once (in
        this thread) if it already has, else on the KMD queue's worker thread (the completion
        interrupt). The callback must not block; :meth:`wait` with a zero timeout then gives
        the outcome (DeviceFaultError for a failed fence). A callback whose fence is never
        reached is dropped with the session's context."""
        with kmd_call("on_fence"):
            self.device.on_fence(self.ctx, ticket.fence, ticket.value, lambda *_: callback())

    def done(self, ticket: Ticket) -> bool:
        """True once the ticket's fence value is reached (non-blocking): known without asking
        the KMD when the execution completed inline."""
        s = self._streams.get(ticket.stream)
        if s is not None and s.fence == ticket.fence and ticket.value <= s.reached:
            return True
        with kmd_call("fence_value"):
            return self.device.fence_value(self.ctx, ticket.fence) >= ticket.value

    def _reclaim(self, s: _Stream) -> None:
        with kmd_call("fence_value"):
            reached = self.device.fence_value(self.ctx, s.fence)
        with s.lock:
            ready = [sc for v, sc in s.pending if v <= reached]
            s.pending = [(v, sc) for v, sc in s.pending if v > reached]
        for sc in ready:
            for va in sc:
                self.pool.free(va)

    def reset_stream(self, stream: int) -> None:
        """Drop the stream's pending work and clear its fault so it accepts work again (sync).

        Tickets issued before the reset stay failed (or never complete); new submissions
        signal a fresh fence, so their tickets start over from value 1.
        """
        self._check_open()
        s = self._stream(stream)
        with s.lock:
            with kmd_call("reset_queue"):
                self.device.reset_queue(self.ctx, s.queue)
                fence = self.device.create_fence(self.ctx, 0)
            s.fence, s.next, s.reached = fence, 1, 0  # failed fences stay failed: use a new one
            dropped, s.pending = s.pending, []
        for _, scratch in dropped:
            for va in scratch:
                self.pool.free(va)

    # -- lifetime -------------------------------------------------------------------------
    def touch(self) -> None:
        """Record activity (KeepAlive): postpones expiry by the keepalive timeout."""
        self.last_seen = time.monotonic()

    def expired(self, now: float) -> bool:
        t = self.keepalive_timeout_s
        return t is not None and now - self.last_seen > t

    def stats(self) -> SessionStats:
        return SessionStats(
            self.pool.live, self.pool.live_bytes, len(self._streams), self.cache.stats()
        )

    def _check_open(self) -> None:
        if self.closed:
            raise ClosedError(f"session {self.session_id} is closed")

    def close(self) -> None:
        """Destroy the KMD context: queues drained, allocations/queues/fences freed. Idempotent."""
        with self._lock:
            if self.closed:
                return
            self.closed = True
        try:
            with kmd_call("destroy_context"):
                self.device.destroy_context(self.ctx)
        finally:
            for hook in self.on_close:
                hook()
