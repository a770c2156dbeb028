"""The UMD protocol (:mod:`stack.umd.protocol`) over gRPC: a runtime drives a remote UMD service.

:class:`RemoteUmd` opens one :class:`RemoteSession` per model, each on its own
:class:`~stack.umd.service.client.UmdClient` (one channel, one server session). Memory and data
go through AllocMemory / StreamTensorData / ReadTensorData (shared memory at or above the
client's ``shm_threshold``), translations are ``translate_only`` batches whose blobs come back,
recorded command buffers are recorded on the service once (RecordCommands: the KMD checks and
binds their blobs there, so a run sends a handle, not the blobs), and a run's writes,
submissions (cross-stream waits as fence references), waits and reads — the same calls, in the
same order, as in process — travel in one Execute call (see :class:`RemoteSession`).

Errors are UMD errors: a request the server refuses raises what the in-process UMD raises; a
server that went away is a TransportError (after the client's retry window); a server that
restarted no longer knows the session: SessionNotFoundError. Sessions are *not* recovered
transparently here (the blobs hold device addresses of the old session): the caller loads the
model again, in a new session. Thread-safe as the client is.
"""

from __future__ import annotations

import threading
import zlib
from collections.abc import Sequence

import numpy as np

from stack.kmd.dtypes import DType
from stack.kmd.kernels.ids import KernelId
from stack.umd.commands import flatten
from stack.umd.errors import (
    ClosedError,
    DeviceRefusedError,
    InvalidRequestError,
    StreamNotFoundError,
)
from stack.umd.ops import OpRequest
from stack.umd.pipeline import Translated
from stack.umd.service import umd_pb2 as pb
from stack.umd.service.client import RemoteTranslated, RetryPolicy, UmdClient
from stack.umd.session import Ticket

#: How long a runtime's client retries UNAVAILABLE before a TransportError.
DEFAULT_POLICY = RetryPolicy(timeout_s=30.0, retry_window_s=5.0)


def _translated(r: RemoteTranslated) -> Translated:
    return Translated(r.blobs, KernelId(r.kernel_id), r.cache_hit)


class RemoteSession:
    """One session of a remote UMD, with the in-process session's methods and contracts.

    Round trips are batched (the Execute RPC): small writes and submissions are held until the
    next wait, which sends them with the wait in one call. That call waits for *every* stream's
    last submission (a wait may return later than asked, never earlier), after which the session
    is idle: it also returns the small reads that followed the previous such wait (a run's
    outputs), and a read of the same span before any new write or submission is answered from
    them. Fence values are predicted (a stream's values are 1, 2, … from its creation or reset)
    and checked against the server's. A fault anywhere in the batch fails the wait that sent it.
    """

    def __init__(self, client: UmdClient, batch_bytes: int = 8 << 20) -> None:
        self.client = client
        self.batch_bytes = min(batch_bytes, client.shm_threshold)
        self._lock = threading.RLock()
        self._writes: list[pb.TensorWrite] = []
        self._pending_bytes = 0
        self._submits: list[pb.SubmitRequest] = []
        self._next: dict[int, int] = {}  # stream -> its next fence value
        self._reached: dict[int, int] = {}  # stream -> value known reached
        self._learned: list[tuple[int, int]] = []  # reads since the last full wait
        self._prefetched: dict[tuple[int, int], bytes] = {}
        self.round_trips = 0
        self.closed = False
        client.session()  # create it now: errors surface at load, not at first use
        self._next[0] = 1  # the server gives every session stream 0

    def alloc(self, nbytes: int, align: int = 64) -> int:
        return self.client.alloc(nbytes, align)

    def write(self, addr: int, array: np.ndarray | bytes, offset: int = 0) -> None:
        raw = array if isinstance(array, bytes) else np.ascontiguousarray(array).tobytes()
        with self._lock:
            self._prefetched.clear()
            if len(raw) >= self.batch_bytes:  # big: its own transfer, after what is held
                self._flush()
                self.client.write(addr + offset, raw)
                return
            self._writes.append(
                pb.TensorWrite(device_addr=addr + offset, payload=raw, checksum=zlib.crc32(raw))
            )
            self._pending_bytes += len(raw)
            if self._pending_bytes >= self.batch_bytes:
                self._flush()

    def read(self, addr: int, shape: tuple[int, ...], dtype: DType) -> np.ndarray:
        nbytes = int(np.prod(shape)) * dtype.itemsize
        with self._lock:
            data = self._prefetched.pop((addr, nbytes), None)
            if data is None:
                self._flush()
                data = self.client.read(addr, nbytes)
            if nbytes < self.batch_bytes:
                self._learned.append((addr, nbytes))
        return np.frombuffer(data, dtype=dtype.numpy).reshape(shape).copy()

    def create_stream(self) -> int:
        r = self.client._call("CreateStream", lambda s: pb.StreamRequest(session_id=s))
        with self._lock:
            self._next[int(r.stream)] = 1
        return int(r.stream)

    def translate(self, req: OpRequest) -> Translated:
        return _translated(self.client.translate(req, submit=False))

    def translate_batch(self, reqs: Sequence[OpRequest]) -> list[Translated]:
        return [_translated(r) for r in self.client.translate_batch(reqs, submit=False)]

    def submit(self, stream: int, ops: Sequence[Translated], wait: Sequence[Ticket] = ()) -> Ticket:
        """Held until the next wait (or flush); the ticket carries the predicted fence value."""
        blobs, _ = flatten(ops)
        waits = [pb.FenceRef(stream=t.stream, fence_value=t.value) for t in wait]
        return self._hold(stream, pb.SubmitRequest(stream=stream, blobs=blobs, waits=waits))

    def _hold(self, stream: int, request: pb.SubmitRequest) -> Ticket:
        """Hold a submission until the next wait; its ticket (the predicted fence value)."""
        with self._lock:
            if stream not in self._next:
                raise StreamNotFoundError(f"no stream {stream} in this session")
            value = self._next[stream]
            self._next[stream] = value + 1
            self._prefetched.clear()
            self._submits.append(request)
        return Ticket(stream, 0, value)

    def record(self, ops: Sequence[Translated]) -> int:
        """Record the ops' blobs on the service (RecordCommands: checked and bound there once);
        runs then send the handle instead of the blobs. Lives until release or close."""
        blobs, scratch = flatten(ops)
        if scratch:
            raise InvalidRequestError(
                "a translation with conversion scratch cannot be recorded", field="ops"
            )
        rid = next(self.client._ids)
        r = self.client._call(
            "RecordCommands", lambda s: pb.RecordRequest(session_id=s, request_id=rid, blobs=blobs)
        )
        return int(r.cmdbuf)

    def execute(
        self,
        stream: int,
        cmdbuf: int,
        wait: Sequence[Ticket] = (),
        *,
        rebind: Sequence[tuple[int, int]] = (),
        inline: bool = False,
    ) -> Ticket:
        """As :meth:`submit`, for a recorded buffer (held until the next wait). ``inline`` is a
        hint the service does not take: its KMD queue runs the buffer, so no serving thread is
        held for a run's length. ``rebind`` is not offered remotely: InvalidRequestError."""
        if rebind:
            raise InvalidRequestError("a remote session does not rebind buffers", field="rebind")
        waits = [pb.FenceRef(stream=t.stream, fence_value=t.value) for t in wait]
        return self._hold(stream, pb.SubmitRequest(stream=stream, cmdbuf=cmdbuf, waits=waits))

    def release(self, cmdbuf: int) -> None:
        """Destroy a recorded buffer; held executions of it are sent first (they still run)."""
        with self._lock:
            self._flush()
            self.client._call(
                "ReleaseCommands", lambda s: pb.ReleaseRequest(session_id=s, cmdbuf=cmdbuf)
            )

    def map(self, addr: int, shape: tuple[int, ...], dtype: DType) -> np.ndarray | None:
        """None: remote memory has no host mapping here (write/read go through the service)."""
        return None

    def done(self, ticket: Ticket) -> bool:
        """False: completion is only learnt by waiting (one round trip either way)."""
        return False

    def wait(self, ticket: Ticket, timeout_s: float | None = None) -> None:
        with self._lock:
            if ticket.value <= self._reached.get(ticket.stream, 0):
                return
            if self._submits or self._writes:
                self._flush(timeout_s, wait_all=True)
                if ticket.value <= self._reached.get(ticket.stream, 0):
                    return
        self.client.wait_fence(ticket.value, 3600.0 if timeout_s is None else timeout_s,
                               stream=ticket.stream)  # fmt: skip
        with self._lock:
            self._reached[ticket.stream] = max(self._reached.get(ticket.stream, 0), ticket.value)

    def _flush(self, timeout_s: float | None = None, *, wait_all: bool = False) -> None:
        """Send what is held (one Execute); with ``wait_all``, wait for every stream too."""
        writes, submits = self._writes, self._submits
        if not (writes or submits or wait_all):
            return
        self._writes, self._submits, self._pending_bytes = [], [], 0
        first = [self._next[m.stream] - sum(1 for x in submits if x.stream == m.stream)
                 for m in submits]  # fmt: skip
        expected = []
        seen: dict[int, int] = {}
        for m, base in zip(submits, first, strict=True):
            expected.append(base + seen.get(m.stream, 0))
            seen[m.stream] = seen.get(m.stream, 0) + 1
        targets = {s: v - 1 for s, v in self._next.items() if v - 1 > self._reached.get(s, 0)}
        waits = (
            [pb.FenceRef(stream=s, fence_value=v) for s, v in targets.items()] if wait_all else []
        )
        reads = [pb.ReadSpan(device_addr=a, nbytes=n) for a, n in self._learned] if wait_all else []
        ms = 0 if timeout_s is None else max(1, int(timeout_s * 1000))
        rid = next(self.client._ids)  # one id space per session: the replay window is shared

        def make(s: int) -> pb.ExecuteRequest:
            return pb.ExecuteRequest(session_id=s, request_id=rid, writes=writes, submits=submits,
                                     waits=waits, timeout_ms=ms, reads=reads)  # fmt: skip

        deadline = (timeout_s or 30.0) + self.client.policy.timeout_s
        r = self.client._call("Execute", make, deadline)
        self.round_trips += 1
        if list(r.fence_values) != expected:
            raise DeviceRefusedError(
                f"fence values {list(r.fence_values)} differ from the expected {expected}"
            )
        if wait_all:
            self._reached.update(targets)
            self._prefetched = {(a, n): d for (a, n), d in zip(self._learned, r.reads, strict=True)}
            self._learned = []

    def reset_stream(self, stream: int) -> None:
        with self._lock:  # its held submissions are dropped like its pending work
            self._submits = [m for m in self._submits if m.stream != stream]
            self._prefetched.clear()
            self.client._call(
                "ResetStream", lambda s: pb.StreamRequest(session_id=s, stream=stream)
            )
            self._next[stream], self._reached[stream] = 1, 0

    def close(self) -> None:
        """Destroy the server session (best effort) and close the channel (idempotent)."""
        if not self.closed:
            self.closed = True
            self.client.close()


class RemoteUmd:
    """The UMD service at ``target`` (``host:port``) as a :class:`~stack.umd.protocol.UmdApi`.

    ``policy``: per-call deadline and UNAVAILABLE retry window of every session's client.
    """

    def __init__(self, target: str, *, policy: RetryPolicy | None = None) -> None:
        self.target = target
        self.policy = policy or DEFAULT_POLICY
        self._backend = ""
        self.closed = False
        self._sessions: list[RemoteSession] = []

    @property
    def backend(self) -> str:
        """The server's kernel backend (known once a session was opened)."""
        return self._backend or "remote"

    def create_session(self) -> RemoteSession:
        if self.closed:
            raise ClosedError("the RemoteUmd is closed")
        client = UmdClient(self.target, policy=self.policy, recover=False, journal=False)
        try:
            session = RemoteSession(client)
        except BaseException:
            client.close()
            raise
        self._backend = client.backend
        self._sessions = [s for s in self._sessions if not s.closed] + [session]
        return session

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        for s in self._sessions:
            s.close()
        self._sessions = []
