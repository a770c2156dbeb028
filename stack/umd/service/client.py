"""``UmdClient``: the thin client of seed 000 §5.1, with retries and session recovery.

One channel per client, shared by every call and thread (gRPC channels are thread-safe); a
deadline on every call; calls retried on UNAVAILABLE for up to ``retry_window_s`` (all calls
are made idempotent: translations carry a request id the server de-duplicates). When the
server restarts, the client's session is unknown to the new process (NOT_FOUND — ids never
repeat): the client creates a new session, re-allocates its memory and re-writes the data it
wrote (its journal), remaps addresses (old VA → new VA, transparently) and repeats the call.
The caller sees at most a delay; if recovery cannot give the same result it raises.
"""

from __future__ import annotations

import itertools
import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple, TypeVar

import grpc
import numpy as np

from stack.kmd.dtypes import DType
from stack.umd.errors import NotFoundError, UmdTimeoutError
from stack.umd.ops import OpRequest, TensorDesc
from stack.umd.service import transfer
from stack.umd.service import umd_pb2 as pb
from stack.umd.service import umd_pb2_grpc as pb_grpc
from stack.umd.service.addresses import AddressMap
from stack.umd.service.convert import request_to_proto
from stack.umd.service.status import error_from_rpc

log = logging.getLogger(__name__)
_RETRYABLE = (grpc.StatusCode.UNAVAILABLE,)
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Per-call deadline and how long/how often UNAVAILABLE is retried."""

    timeout_s: float = 5.0
    retry_window_s: float = 20.0
    backoff_s: float = 0.02
    max_backoff_s: float = 0.5


class RemoteTranslated(NamedTuple):
    """What the service answered for one op (see ``OpResponse`` in the proto); immutable."""

    blobs: tuple[bytes, ...]
    kernel_id: int
    cache_hit: bool
    fence_value: int
    submitted: bool
    latency_us: int

    @classmethod
    def from_proto(cls, r: pb.OpResponse) -> RemoteTranslated:
        ins = r.instructions
        if len(ins) == 1:
            first = ins[0]
            blobs: tuple[bytes, ...] = (first.instruction_blob,)
            main = first.kernel_id
        else:
            blobs = tuple([i.instruction_blob for i in ins])
            main = ins[r.primary].kernel_id if r.primary < len(ins) else 0
        return cls(blobs, main, r.cache_hit, r.fence_value, r.submitted, r.translate_latency_us)


class UmdClient:
    """Client of one ``InstructionTranslator`` at ``target`` (``host:port``). Thread-safe.

    ``policy``: per-call deadline and retry window. ``shm_threshold``: transfers of at least
    this many bytes use shared memory. ``keepalive_timeout_ms``: the session's expiry on the
    server (0: the server's default); ``keepalive_interval_s``: if set, a background thread
    sends KeepAlive that often (otherwise an idle session expires, and the next call recovers
    it like after a restart). ``journal``: keep written data to replay after a recovery.
    ``recover=False``: a lost session raises SessionNotFoundError instead of being recovered
    (for callers holding device addresses inside blobs, such as the runtime).
    Lifetime: :meth:`close` destroys the session and closes the channel.
    """

    def __init__(
        self,
        target: str,
        *,
        policy: RetryPolicy | None = None,
        shm_threshold: int = 1 << 20,
        chunk_size: int = 256 << 10,
        max_message_bytes: int = 64 << 20,
        keepalive_timeout_ms: int = 0,
        keepalive_interval_s: float | None = None,
        journal: bool = True,
        recover: bool = True,
    ) -> None:
        self.target = target
        self.policy = policy or RetryPolicy()
        self.shm_threshold = shm_threshold
        self.chunk_size = chunk_size
        self.keepalive_timeout_ms = keepalive_timeout_ms
        self.journal = journal
        self.recover = recover
        self.backend = ""
        self.channel = grpc.insecure_channel(
            target,
            options=[
                ("grpc.max_receive_message_length", max_message_bytes),
                ("grpc.max_send_message_length", max_message_bytes),
                ("grpc.keepalive_time_ms", 10_000),
                ("grpc.keepalive_timeout_ms", 30_000),
                ("grpc.initial_reconnect_backoff_ms", 50),
                ("grpc.max_reconnect_backoff_ms", 500),
                # a connection of its own: the server's per-client limits count this client
                # alone (gRPC otherwise shares one connection among a process's channels)
                ("grpc.use_local_subchannel_pool", 1),
            ],
        )
        self.stub = pb_grpc.InstructionTranslatorStub(self.channel)
        self.session_id: int | None = None
        self.retries = 0
        self.recoveries = 0
        self.addresses = AddressMap()
        self._writes: list[tuple[int, bytes]] = []
        self._protos: dict[OpRequest, pb.OpRequest] = {}
        self._by_id: dict[int, tuple[OpRequest, pb.OpRequest]] = {}
        self._ids = itertools.count(1)
        self._lock = threading.RLock()
        self._stop = threading.Event()
        self._pinger: threading.Thread | None = None
        if keepalive_interval_s is not None:
            self._pinger = threading.Thread(
                target=self._ping, args=(keepalive_interval_s,), name="umd-keepalive", daemon=True
            )
            self._pinger.start()

    # -- plumbing -------------------------------------------------------------------------
    def _raw(self, method: str, request: Any, timeout_s: float | None = None) -> Any:
        """One call with UNAVAILABLE retries; no session recovery.

        ``request`` is a message, or a callable making one per attempt (a fresh chunk iterator
        for a streaming call).
        """
        give_up = time.monotonic() + self.policy.retry_window_s
        backoff = self.policy.backoff_s
        while True:
            try:
                msg = request() if callable(request) else request
                return getattr(self.stub, method)(msg, timeout=timeout_s or self.policy.timeout_s)
            except grpc.RpcError as err:
                code = err.code()
                if code in _RETRYABLE and time.monotonic() < give_up:
                    self.retries += 1
                    time.sleep(backoff)
                    backoff = min(2 * backoff, self.policy.max_backoff_s)
                    continue
                raise error_from_rpc(err, method) from None

    def _call(self, method: str, make: Callable[[int], Any], timeout_s: float | None = None) -> Any:
        """A session call: ``make(session_id)`` builds the request (after any recovery)."""
        return self._with_session(lambda sid: self._raw(method, lambda: make(sid), timeout_s))

    def _with_session(self, fn: Callable[[int], T]) -> T:
        """Run ``fn(session_id)``; if the server lost the session, recover once and rerun."""
        recovered = False
        while True:
            sid = self.session()
            try:
                return fn(sid)
            except NotFoundError as exc:
                if recovered or not self.recover or "no session" not in exc.message:
                    raise
                recovered = True
                self._recover(sid)

    def session(self) -> int:
        """The current session id, creating the session on first use."""
        if self.session_id is None:
            with self._lock:
                if self.session_id is None:
                    self._create()
        assert self.session_id is not None
        return self.session_id

    def _create(self) -> None:
        info = self._raw(
            "CreateSession", pb.CreateSessionRequest(keepalive_timeout_ms=self.keepalive_timeout_ms)
        )
        self.session_id = info.session_id
        self.backend = info.backend

    def _recover(self, lost: int) -> None:
        """Recreate the session after a server restart: memory, data, address map."""
        with self._lock:
            if self.session_id != lost:
                return  # another thread recovered already
            log.warning("session %x lost (server restarted?); recovering", lost)
            self._create()
            for e in self.addresses.in_order():
                r = self._raw(
                    "AllocMemory",
                    pb.AllocRequest(session_id=self.session_id, nbytes=e.nbytes, align=e.align),
                )
                self.addresses.rebind(e, r.device_addr)
            self._protos.clear()
            self._by_id.clear()
            for addr, data in self._writes:
                self._write_stream(self.resolve(addr), data)
            self.recoveries += 1

    def resolve(self, addr: int) -> int:
        """The current device address of an address this client handed out."""
        return self.addresses.resolve(addr)

    # -- memory ---------------------------------------------------------------------------
    def alloc(self, nbytes: int, align: int = 64) -> int:
        """Allocate device memory in the session; the address stays valid across recoveries."""
        r = self._call(
            "AllocMemory", lambda s: pb.AllocRequest(session_id=s, nbytes=nbytes, align=align)
        )
        return self.addresses.add(r.device_addr, nbytes, align)

    def free(self, addr: int) -> None:
        """Free an allocation (and forget the data journaled for it)."""
        self._call(
            "FreeMemory", lambda s: pb.FreeRequest(session_id=s, device_addr=self.resolve(addr))
        )
        e = self.addresses.remove(addr)
        with self._lock:
            self._writes = [w for w in self._writes if not e.handle <= w[0] < e.handle + e.nbytes]
        self._protos.clear()
        self._by_id.clear()

    def write(self, addr: int, data: bytes | np.ndarray) -> None:
        """Upload host data (chunked stream; shared memory at or above ``shm_threshold``)."""
        raw = np.ascontiguousarray(data).tobytes() if isinstance(data, np.ndarray) else bytes(data)
        if len(raw) >= self.shm_threshold:
            self._with_session(lambda s: transfer.upload_shm(self._raw, s, self.resolve(addr), raw))
        else:
            step = self.chunk_size
            self._call(
                "StreamTensorData", lambda s: transfer.chunks(s, self.resolve(addr), raw, step)
            )
        if self.journal:
            with self._lock:
                self._writes.append((addr, raw))

    def _write_stream(self, addr: int, raw: bytes) -> None:
        sid, step = self.session(), self.chunk_size
        self._raw("StreamTensorData", lambda: transfer.chunks(sid, addr, raw, step))

    def read(self, addr: int, nbytes: int) -> bytes:
        """Download device memory (chunked stream, or shared memory for large reads)."""
        if nbytes >= self.shm_threshold:
            return self._with_session(
                lambda s: transfer.download_shm(self._raw, s, self.resolve(addr), nbytes)
            )
        timeout = self.policy.timeout_s
        return self._with_session(
            lambda s: transfer.download_stream(self.stub, timeout, s, self.resolve(addr), nbytes)
        )

    def read_array(self, addr: int, shape: tuple[int, ...], dtype: DType) -> np.ndarray:
        n = int(np.prod(shape)) * dtype.itemsize
        return np.frombuffer(self.read(addr, n), dtype=dtype.numpy).reshape(shape).copy()

    # -- translation ----------------------------------------------------------------------
    def _op(self, req: OpRequest) -> pb.OpRequest:
        """The proto of an op with current addresses, memoised (reset when addresses move).

        Looked up by identity first (a caller re-sending the same request objects — a model's
        steady state — pays no hashing), then by value.
        """
        hit = self._by_id.get(id(req))
        if hit is not None and hit[0] is req:  # the memo holds req, so its id is not reused
            return hit[1]
        m = self._protos.get(req)
        if m is None:
            live = req
            if self.addresses.moved:
                move = self.resolve
                live = OpRequest(
                    req.op,
                    tuple(TensorDesc(move(d.addr), d.shape, d.dtype, d.layout) for d in req.inputs),
                    tuple(
                        TensorDesc(move(d.addr), d.shape, d.dtype, d.layout) for d in req.outputs
                    ),
                    req.attrs,
                )
            m = request_to_proto(live)
            if len(self._protos) >= 4096:
                self._protos.clear()
            self._protos[req] = m
        if len(self._by_id) >= 4096:
            self._by_id.clear()
        self._by_id[id(req)] = (req, m)
        return m

    def _proto(self, req: OpRequest, sid: int, rid: int) -> pb.OpRequest:
        m = pb.OpRequest()
        m.CopyFrom(self._op(req))
        m.session_id, m.request_id = sid, rid
        return m

    def translate(
        self, req: OpRequest, *, submit: bool = True, wait: bool = False
    ) -> RemoteTranslated:
        """Translate (and by default submit) one op; ``wait`` blocks until it ran."""
        rid = next(self._ids)

        def make(sid: int) -> pb.OpRequest:
            m = self._proto(req, sid, rid)
            m.translate_only = not submit
            m.wait = wait
            return m

        return RemoteTranslated.from_proto(self._call("TranslateOp", make))

    def translate_batch(
        self, reqs: Sequence[OpRequest], *, submit: bool = True, wait: bool = False
    ) -> list[RemoteTranslated]:
        """Translate ops in order as one batch (one command buffer, one fence value)."""
        rid = next(self._ids)

        def make(sid: int) -> pb.BatchOpRequest:
            return pb.BatchOpRequest(
                session_id=sid, request_id=rid, translate_only=not submit, wait=wait,
                ops=[self._op(r) for r in reqs],
            )  # fmt: skip

        r = self._call("TranslateOpsBatch", make)
        return [RemoteTranslated.from_proto(x) for x in r.responses]

    def wait_fence(self, value: int, timeout_s: float = 30.0, stream: int = 0) -> None:
        """Block until the session queue's fence reaches ``value`` (UmdTimeoutError after
        ``timeout_s``). The server caps one wait (``max_wait_s``); longer waits are repeated."""
        end = time.monotonic() + timeout_s
        while True:
            left = end - time.monotonic()
            ms = max(1, int(left * 1000))

            def make(s: int, ms: int = ms) -> pb.WaitFenceRequest:
                return pb.WaitFenceRequest(
                    session_id=s, fence_value=value, timeout_ms=ms, stream=stream
                )

            try:
                self._call("WaitFence", make, left + self.policy.timeout_s)
                return
            except UmdTimeoutError:
                if time.monotonic() >= end - 0.001:
                    raise

    def keepalive(self) -> None:
        self._call("KeepAlive", lambda s: pb.KeepAliveRequest(session_id=s))

    def echo(self, payload: bytes = b"") -> bytes:
        return bytes(self._raw("Echo", pb.EchoRequest(payload=payload)).payload)

    def _ping(self, interval_s: float) -> None:
        """Background KeepAlive of the session while the client is open (optional)."""
        while not self._stop.wait(interval_s):
            sid = self.session_id
            if sid is None:
                continue
            try:
                self.stub.KeepAlive(
                    pb.KeepAliveRequest(session_id=sid), timeout=max(1.0, interval_s)
                )
            except grpc.RpcError as err:  # the next real call recovers; nothing to do here
                log.debug("KeepAlive: %s", err.code())

    def close(self) -> None:
        """Destroy the session (best effort) and close the channel."""
        self._stop.set()
        if self._pinger is not None:
            self._pinger.join(5)
        if self.session_id is not None:
            try:
                self.stub.DestroySession(
                    pb.DestroySessionRequest(session_id=self.session_id), timeout=2
                )
            except grpc.RpcError as err:
                log.debug("DestroySession: %s", err)
            self.session_id = None
        self.channel.close()

    def __enter__(self) -> UmdClient:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
