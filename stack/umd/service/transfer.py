"""Client-side data movement: chunked streams and the shared-memory side channel.

Plain functions over a ``call(method, request)`` (the client's call with retries) so that
:class:`~stack.umd.service.client.UmdClient` keeps only sessions, retries and translation.
Every path checks CRC32s: per chunk for streams, per region for shared memory.
"""

from __future__ import annotations

import contextlib
import zlib
from collections.abc import Callable, Iterator
from typing import Any

import grpc

from stack.umd.errors import NotFoundError, SharedMemoryError
from stack.umd.service import umd_pb2 as pb
from stack.umd.service import umd_pb2_grpc as pb_grpc
from stack.umd.service.shm import attach, buffer_of
from stack.umd.service.status import error_from_rpc

Call = Callable[[str, Any], Any]


def chunks(sid: int, addr: int, raw: bytes, step: int) -> Iterator[pb.TensorChunk]:
    """``raw`` as TensorChunks of at most ``step`` bytes (one empty chunk for empty data)."""
    for off in range(0, max(len(raw), 1), step):
        payload = raw[off : off + step]
        yield pb.TensorChunk(
            session_id=sid, device_addr=addr, offset=off, payload=payload,
            checksum=zlib.crc32(payload), total_size=len(raw),
        )  # fmt: skip


def close_region(call: Call, sid: int, region_id: int) -> None:
    """Close a region; quietly if its session (and with it the region) is gone already."""
    with contextlib.suppress(NotFoundError):
        call("CloseSharedMemory", pb.CloseShmRequest(session_id=sid, region_id=region_id))


def upload_shm(call: Call, sid: int, addr: int, raw: bytes) -> None:
    """Open a region, write ``raw`` into it, commit it to ``addr`` (CRC32 checked), close it."""
    region = call("OpenSharedMemory", pb.OpenShmRequest(session_id=sid, nbytes=len(raw)))
    try:
        shm = attach(region.name)
        try:
            buffer_of(shm)[: len(raw)] = raw
        finally:
            shm.close()
        transfer = pb.ShmTransfer(
            session_id=sid, region_id=region.region_id, device_addr=addr,
            nbytes=len(raw), checksum=zlib.crc32(raw),
        )  # fmt: skip
        call("CommitSharedMemory", transfer)
    finally:
        close_region(call, sid, region.region_id)


def download_shm(call: Call, sid: int, addr: int, nbytes: int) -> bytes:
    """Export ``nbytes`` at ``addr`` through a region; the CRC32 the server sent is checked."""
    region = call("OpenSharedMemory", pb.OpenShmRequest(session_id=sid, nbytes=nbytes))
    try:
        ack = call(
            "ExportSharedMemory",
            pb.ShmTransfer(
                session_id=sid, region_id=region.region_id, device_addr=addr, nbytes=nbytes
            ),
        )
        shm = attach(region.name)
        try:
            data = bytes(buffer_of(shm)[:nbytes])
        finally:
            shm.close()
    finally:
        close_region(call, sid, region.region_id)
    if zlib.crc32(data) != ack.checksum:
        raise SharedMemoryError("shared-memory export: checksum mismatch")
    return data


def download_stream(
    stub: pb_grpc.InstructionTranslatorStub, timeout_s: float, sid: int, addr: int, nbytes: int
) -> bytes:
    """ReadTensorData: the chunks in offset order, each CRC32 checked."""
    req = pb.ReadTensorRequest(session_id=sid, device_addr=addr, nbytes=nbytes)
    try:
        got = list(stub.ReadTensorData(req, timeout=timeout_s))
    except grpc.RpcError as err:
        raise error_from_rpc(err, "ReadTensorData") from None
    for c in got:
        if zlib.crc32(c.payload) != c.checksum:
            raise SharedMemoryError(f"chunk at {c.offset}: checksum mismatch")
    return b"".join(c.payload for c in sorted(got, key=lambda c: c.offset))
