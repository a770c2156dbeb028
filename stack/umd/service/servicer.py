"""The ``InstructionTranslator`` servicer: each RPC of ``contracts/umd.proto`` on a :class:`Umd`.

Admission, touch, replay, waits and the error mapping every handler shares are in
:mod:`stack.umd.service.calls`. The RPCs that may wait for a fence (``TranslateOp`` and
``TranslateOpsBatch`` with ``wait``, ``WaitFence``, ``Execute`` with ``waits``) are coroutines:
their work runs on a worker thread, their wait on no thread at all.
"""

from __future__ import annotations

import time
import zlib
from collections.abc import Iterator
from typing import Any

from stack.errors import UmdError
from stack.umd.errors import InvalidRequestError, SharedMemoryError
from stack.umd.service import umd_pb2 as pb
from stack.umd.service import umd_pb2_grpc as pb_grpc
from stack.umd.service.calls import ServiceBase, arpc, rpc
from stack.umd.service.convert import fill_response, response_for
from stack.umd.service.execute import MAX_CHUNK, execute_inline, read_all, record, submit
from stack.umd.service.status import abort
from stack.umd.session import Ticket, UmdSession

_OK = pb.Status(code=0)
_DEFAULT_CHUNK = 1 << 20
_REPLAY_READ_BYTES = 64 << 10  # an Execute answer carrying more is not kept for replays
_Done = tuple[Any, Ticket | None]  # a response, and the ticket to wait for before answering


class TranslatorService(ServiceBase, pb_grpc.InstructionTranslatorServicer):
    """Serves one :class:`Umd` (see :class:`~stack.umd.service.calls.ServiceBase`)."""

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
            backend=self.umd.device.backend,
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
    @arpc
    async def TranslateOp(self, request: pb.OpRequest, context: Any) -> pb.OpResponse:
        session = self._session(request.session_id)
        cached = self._replayed(session, request.request_id)
        if cached is not None:
            return cached
        response, ticket = await self._run(self._translate_op, session, request)
        if ticket is not None:
            await self._wait(session, ticket, 0, context)
        self._remember(session, request.request_id, response)
        return response

    def _translate_op(self, session: UmdSession, request: pb.OpRequest) -> _Done:
        t0 = time.perf_counter_ns()
        t = session.translate(self.decoder.decode(request))
        latency = (time.perf_counter_ns() - t0) // 1000
        ticket = None if request.translate_only else session.submit(0, [t])
        fence = 0 if ticket is None else ticket.value
        waits = ticket if request.wait else None
        return response_for(t, request.request_id, latency, fence), waits

    @arpc
    async def TranslateOpsBatch(
        self, request: pb.BatchOpRequest, context: Any
    ) -> pb.BatchOpResponse:
        session = self._session(request.session_id)
        cached = self._replayed(session, request.request_id)
        if cached is not None:
            return cached
        response, ticket = await self._run(self._translate_batch, session, request)
        if ticket is not None:
            await self._wait(session, ticket, 0, context)
        self._remember(session, request.request_id, response)
        return response

    def _translate_batch(self, session: UmdSession, request: pb.BatchOpRequest) -> _Done:
        t0 = time.perf_counter_ns()
        reqs = [self.decoder.decode(m, f"ops[{i}].") for i, m in enumerate(request.ops)]
        if not reqs:
            raise InvalidRequestError("a batch needs at least one op", field="ops")
        done = session.translate_batch(reqs)
        latency = (time.perf_counter_ns() - t0) // 1000
        ticket = None if request.translate_only else session.submit(0, done)
        fence = 0 if ticket is None else ticket.value
        per_op = latency // len(done)
        response = pb.BatchOpResponse(fence_value=fence, translate_latency_us=latency)
        response.status.code = 0
        add = response.responses.add
        for t, m in zip(done, request.ops, strict=True):
            fill_response(add(), t, m.request_id, per_op, fence, status=False)
        return response, (ticket if request.wait else None)

    @arpc
    async def WaitFence(self, request: pb.WaitFenceRequest, context: Any) -> pb.Status:
        session = self._session(request.session_id)
        ticket = session.ticket(request.stream, request.fence_value)
        await self._wait(session, ticket, request.timeout_ms, context)
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
            step = min(request.chunk_size or _DEFAULT_CHUNK, MAX_CHUNK)
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

    # -- streams and submission (a runtime driving the service) --------------------------
    @rpc
    def CreateStream(self, request: pb.StreamRequest, context: Any) -> pb.StreamInfo:
        return pb.StreamInfo(stream=self._session(request.session_id).create_stream())

    @rpc
    def ResetStream(self, request: pb.StreamRequest, context: Any) -> pb.Status:
        self._session(request.session_id).reset_stream(request.stream)
        return _OK

    @rpc
    def SubmitCommands(self, request: pb.SubmitRequest, context: Any) -> pb.SubmitResponse:
        session = self._session(request.session_id)
        cached = self._replayed(session, request.request_id)
        if cached is not None:
            return cached
        response = pb.SubmitResponse(
            stream=request.stream, fence_value=submit(session, request, "")
        )
        self._remember(session, request.request_id, response)
        return response

    @arpc
    async def Execute(self, request: pb.ExecuteRequest, context: Any) -> pb.ExecuteResponse:
        session = self._session(request.session_id)
        cached = self._replayed(session, request.request_id)
        if cached is not None:
            return cached
        if any(r.nbytes > MAX_CHUNK for r in request.reads):
            raise InvalidRequestError(f"a read of more than {MAX_CHUNK} bytes", field="reads")
        values, reads = await self._run(execute_inline, session, request)
        if reads is None:  # work still running after the inline budget: wait without a thread
            for f in request.waits:
                ticket = session.ticket(f.stream, f.fence_value)
                await self._wait(session, ticket, request.timeout_ms, context)
            reads = await self._run(read_all, session, request)
        response = pb.ExecuteResponse(fence_values=values, reads=reads)
        if sum(r.nbytes for r in request.reads) <= _REPLAY_READ_BYTES:
            self._remember(session, request.request_id, response)
        return response

    @rpc
    def RecordCommands(self, request: pb.RecordRequest, context: Any) -> pb.RecordResponse:
        session = self._session(request.session_id)
        cached = self._replayed(session, request.request_id)
        if cached is not None:
            return cached
        response = pb.RecordResponse(cmdbuf=record(session, request))
        self._remember(session, request.request_id, response)
        return response

    @rpc
    def ReleaseCommands(self, request: pb.ReleaseRequest, context: Any) -> pb.Status:
        self._session(request.session_id).release(request.cmdbuf)
        return _OK

    def Echo(self, request: pb.EchoRequest, context: Any) -> pb.EchoResponse:
        return pb.EchoResponse(payload=request.payload)
