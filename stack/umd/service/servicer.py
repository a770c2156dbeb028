"""The ``InstructionTranslator`` servicer: each RPC of ``contracts/umd.proto`` on a :class:`Umd`.

Every handler is admitted first (:mod:`stack.umd.service.admission`: per-server, per-client,
per-session and wait-slot limits, RESOURCE_EXHAUSTED beyond them), touches its session on the
way in and out (KeepAlive semantics: any call keeps a session alive, and a session with a call
in flight never expires), and maps :class:`~stack.errors.UmdError` to its status code
(:mod:`stack.umd.service.status`). While the server drains for shutdown, new calls get
UNAVAILABLE and waits in flight end with UNAVAILABLE; other calls already running finish.
"""

from __future__ import annotations

import functools
import logging
import threading
import time
import zlib
from collections import OrderedDict
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

import grpc

from stack.errors import UmdError
from stack.umd.driver import Umd
from stack.umd.errors import (
    InvalidRequestError,
    SharedMemoryError,
    TransportError,
    UmdTimeoutError,
)
from stack.umd.service import umd_pb2 as pb
from stack.umd.service import umd_pb2_grpc as pb_grpc
from stack.umd.service.admission import Admission, Admitted, Limits
from stack.umd.service.convert import RequestDecoder, fill_response, response_for
from stack.umd.service.shm import ShmRegistry
from stack.umd.service.status import abort
from stack.umd.session import Ticket, UmdSession

log = logging.getLogger(__name__)
F = TypeVar("F", bound=Callable[..., Any])
_OK = pb.Status(code=0)
_DEFAULT_CHUNK = 1 << 20
_MAX_CHUNK = 4 << 20
_DEFAULT_WAIT_S = 30.0
_WAIT_SLICE_S = 0.05


def _waits(request: Any) -> bool:
    """True for a request that blocks on a fence by design."""
    if isinstance(request, pb.WaitFenceRequest):
        return True
    return bool(getattr(request, "wait", False)) and not getattr(request, "translate_only", True)


def rpc(fn: F) -> F:
    """Wrap a unary handler: admission, drain refusal, touch, UmdError → status code.

    An exception that is not a UmdError is a server bug: it is logged with its traceback and
    answered INTERNAL (never UNKNOWN, never the traceback to the client).
    """

    @functools.wraps(fn)
    def wrapper(self: TranslatorService, request: Any, context: grpc.ServicerContext) -> Any:
        sid = getattr(request, "session_id", 0)
        ticket = self._enter(context, sid, _waits(request))
        try:
            return fn(self, request, context)
        except UmdError as exc:
            abort(context, exc)
        except grpc.RpcError:  # the caller went away mid-stream: nobody to answer
            raise
        except Exception:  # a server bug: logged, answered INTERNAL (handlers never abort)
            log.exception("%s failed", fn.__name__)
            context.abort(grpc.StatusCode.INTERNAL, f"{fn.__name__}: internal error (logged)")
        finally:
            self._leave(ticket, sid)

    return wrapper  # type: ignore[return-value]


class TranslatorService(pb_grpc.InstructionTranslatorServicer):
    """Serves one :class:`Umd`; sessions get ``session_timeout_s`` unless they ask otherwise."""

    def __init__(
        self,
        umd: Umd,
        *,
        session_timeout_s: float = 30.0,
        limits: Limits | None = None,
        replay_window: int = 1024,
    ) -> None:
        self.umd = umd
        self.session_timeout_s = session_timeout_s
        self.admission = Admission(limits or Limits())
        self.replay_window = replay_window
        self.shm = ShmRegistry()
        self.decoder = RequestDecoder()
        self.start_ms = int(time.time() * 1000)
        self.shutting_down = threading.Event()
        self._replay: dict[int, OrderedDict[int, Any]] = {}
        umd.sessions.busy = self.admission.busy

    @property
    def draining(self) -> bool:
        return self.shutting_down.is_set()

    # -- plumbing -------------------------------------------------------------------------
    def _enter(self, context: grpc.ServicerContext, sid: int, waits: bool) -> Admitted:
        if self.shutting_down.is_set():
            context.abort(grpc.StatusCode.UNAVAILABLE, "server is shutting down")
        try:
            ticket = self.admission.enter(context.peer(), sid, waits)
        except UmdError as exc:
            abort(context, exc)
        self._touch(sid)
        return ticket

    def _leave(self, ticket: Admitted, sid: int) -> None:
        self._touch(sid)
        self.admission.leave(ticket)

    def _touch(self, sid: int) -> None:
        if sid:
            session = self.umd.sessions.find(sid)
            if session is not None:
                session.touch()

    def wait_idle(self, timeout_s: float) -> bool:
        """Block until no call is in flight (True) or the timeout passes (False)."""
        return self.admission.wait_idle(timeout_s)

    def _session(self, session_id: int) -> UmdSession:
        session = self.umd.sessions.get(session_id)
        session.touch()
        return session

    def _replayed(self, session: UmdSession, request_id: int) -> Any:
        if not request_id:
            return None
        window = self._replay.get(session.key)
        return None if window is None else window.get(request_id)

    def _remember(self, session: UmdSession, request_id: int, response: Any) -> None:
        if not request_id:
            return
        window = self._replay.get(session.key)
        if window is None:
            window = self._replay.setdefault(session.key, OrderedDict())
            session.on_close.append(lambda: self._forget(session.key))
        window[request_id] = response
        while len(window) > self.replay_window:
            window.popitem(last=False)

    def _forget(self, key: int) -> None:
        self._replay.pop(key, None)

    def _wait(
        self, session: UmdSession, ticket: Ticket, ms: int, context: grpc.ServicerContext
    ) -> None:
        """Wait for a fence in slices, at most ``max_wait_s`` (whatever ``ms`` asks), ending
        early when the caller goes away (DEADLINE_EXCEEDED) or the server shuts down
        (UNAVAILABLE)."""
        cap = self.admission.limits.max_wait_s
        asked = ms / 1000 if ms else _DEFAULT_WAIT_S
        remaining = context.time_remaining()
        limit = min(asked, cap) if remaining is None else max(0.0, min(asked, cap, remaining))
        end = time.monotonic() + limit
        while True:
            left = end - time.monotonic()
            try:
                session.wait(ticket, max(0.0, min(_WAIT_SLICE_S, left)))
                return
            except UmdTimeoutError:
                if self.shutting_down.is_set():
                    raise TransportError("server is shutting down") from None
                if left <= _WAIT_SLICE_S or not context.is_active():
                    raise UmdTimeoutError(
                        f"fence {ticket.value} not reached within {limit:g} s"
                        + (f" (waits are capped at {cap:g} s)" if asked > cap else "")
                    ) from None

    # -- sessions -------------------------------------------------------------------------
    @rpc
    def CreateSession(self, request: pb.CreateSessionRequest, context: Any) -> pb.SessionInfo:
        timeout = request.keepalive_timeout_ms / 1000 or self.session_timeout_s
        session = self.umd.create_session(keepalive_timeout_s=timeout)
        session.create_stream()
        return pb.SessionInfo(
            session_id=session.key,
            keepalive_timeout_ms=int(timeout * 1000),
            server_start_ms=self.start_ms,
        )

    @rpc
    def DestroySession(self, request: pb.DestroySessionRequest, context: Any) -> pb.Status:
        self.umd.sessions.destroy(request.session_id)
        return _OK

    @rpc
    def KeepAlive(self, request: pb.KeepAliveRequest, context: Any) -> pb.Status:
        self._session(request.session_id)
        return _OK

    # -- translation ----------------------------------------------------------------------
    @rpc
    def TranslateOp(self, request: pb.OpRequest, context: Any) -> pb.OpResponse:
        session = self._session(request.session_id)
        cached = self._replayed(session, request.request_id)
        if cached is not None:
            return cached
        t0 = time.perf_counter_ns()
        t = session.translate(self.decoder.decode(request))
        latency = (time.perf_counter_ns() - t0) // 1000
        fence = 0
        if not request.translate_only:
            ticket = session.submit(0, [t])
            fence = ticket.value
            if request.wait:
                self._wait(session, ticket, 0, context)
        response = response_for(t, request.request_id, latency, fence)
        self._remember(session, request.request_id, response)
        return response

    @rpc
    def TranslateOpsBatch(self, request: pb.BatchOpRequest, context: Any) -> pb.BatchOpResponse:
        session = self._session(request.session_id)
        cached = self._replayed(session, request.request_id)
        if cached is not None:
            return cached
        t0 = time.perf_counter_ns()
        reqs = [self.decoder.decode(m, f"ops[{i}].") for i, m in enumerate(request.ops)]
        if not reqs:
            raise InvalidRequestError("a batch needs at least one op", field="ops")
        done = session.translate_batch(reqs)
        latency = (time.perf_counter_ns() - t0) // 1000
        fence = 0
        if not request.translate_only:
            ticket = session.submit(0, done)
            fence = ticket.value
            if request.wait:
                self._wait(session, ticket, 0, context)
        per_op = latency // len(done)
        response = pb.BatchOpResponse(fence_value=fence, translate_latency_us=latency)
        response.status.code = 0
        add = response.responses.add
        for t, m in zip(done, request.ops, strict=True):
            fill_response(add(), t, m.request_id, per_op, fence, status=False)
        self._remember(session, request.request_id, response)
        return response

    @rpc
    def WaitFence(self, request: pb.WaitFenceRequest, context: Any) -> pb.Status:
        session = self._session(request.session_id)
        self._wait(session, session.ticket(0, request.fence_value), request.timeout_ms, context)
        return _OK

    # -- memory and data ------------------------------------------------------------------
    @rpc
    def AllocMemory(self, request: pb.AllocRequest, context: Any) -> pb.AllocResponse:
        session = self._session(request.session_id)
        addr = session.alloc(request.nbytes, request.align or 64)
        return pb.AllocResponse(device_addr=addr, nbytes=request.nbytes)

    @rpc
    def FreeMemory(self, request: pb.FreeRequest, context: Any) -> pb.Status:
        self._session(request.session_id).free(request.device_addr)
        return _OK

    @rpc
    def StreamTensorData(
        self, request_iterator: Iterator[pb.TensorChunk], context: Any
    ) -> pb.StreamAck:
        session: UmdSession | None = None
        received = chunks = 0
        lo, hi, base = None, 0, 0
        for chunk in request_iterator:
            if session is None:
                session = self._session(chunk.session_id)
                base = chunk.device_addr
            elif chunk.session_id != session.key or chunk.device_addr != base:
                raise InvalidRequestError(
                    "chunks of one stream must share session and tensor", field="session_id"
                )
            if zlib.crc32(chunk.payload) != chunk.checksum:
                raise SharedMemoryError(f"chunk at offset {chunk.offset}: checksum mismatch")
            session.write(base, chunk.payload, chunk.offset)
            received += len(chunk.payload)
            chunks += 1
            lo = chunk.offset if lo is None else min(lo, chunk.offset)
            hi = max(hi, chunk.offset + len(chunk.payload))
        if session is None or lo is None:
            raise InvalidRequestError("the stream carried no chunk", field="chunks")
        crc = zlib.crc32(session.read_bytes(base, hi - lo, lo)) if hi > lo else 0
        return pb.StreamAck(status=_OK, bytes_received=received, checksum=crc, chunks=chunks)

    def ReadTensorData(
        self, request: pb.ReadTensorRequest, context: Any
    ) -> Iterator[pb.TensorChunk]:
        ticket = self._enter(context, request.session_id, False)
        try:
            session = self._session(request.session_id)
            step = min(request.chunk_size or _DEFAULT_CHUNK, _MAX_CHUNK)
            data = session.read_bytes(request.device_addr, request.nbytes)
        except UmdError as exc:
            abort(context, exc)
        finally:
            self._leave(ticket, request.session_id)
        for off in range(0, len(data), step):
            payload = data[off : off + step]
            yield pb.TensorChunk(
                session_id=session.key, device_addr=request.device_addr, offset=off,
                payload=payload, checksum=zlib.crc32(payload), total_size=len(data),
            )  # fmt: skip

    # -- shared memory --------------------------------------------------------------------
    @rpc
    def OpenSharedMemory(self, request: pb.OpenShmRequest, context: Any) -> pb.ShmRegion:
        session = self._session(request.session_id)
        region_id, name, size = self.shm.open(session, request.nbytes)
        return pb.ShmRegion(region_id=region_id, name=name, size=size)

    @rpc
    def CommitSharedMemory(self, request: pb.ShmTransfer, context: Any) -> pb.StreamAck:
        session = self._session(request.session_id)
        crc = self.shm.commit(
            session, request.region_id, request.device_addr, request.nbytes,
            request.checksum, request.region_offset,
        )  # fmt: skip
        return pb.StreamAck(status=_OK, bytes_received=request.nbytes, checksum=crc, chunks=1)

    @rpc
    def ExportSharedMemory(self, request: pb.ShmTransfer, context: Any) -> pb.StreamAck:
        session = self._session(request.session_id)
        crc = self.shm.export(
            session, request.region_id, request.device_addr, request.nbytes, request.region_offset
        )
        return pb.StreamAck(status=_OK, bytes_received=request.nbytes, checksum=crc, chunks=1)

    @rpc
    def CloseSharedMemory(self, request: pb.CloseShmRequest, context: Any) -> pb.Status:
        session = self._session(request.session_id)
        self.shm.close(session.key, request.region_id)
        return _OK

    def Echo(self, request: pb.EchoRequest, context: Any) -> pb.EchoResponse:
        return pb.EchoResponse(payload=request.payload)
