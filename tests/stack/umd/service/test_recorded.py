"""Recorded command buffers on the service: RecordCommands, a submission by handle, release."""

from __future__ import annotations

import zlib

import grpc
import numpy as np
import pytest

from stack.umd import DType, OpKind, OpRequest, TensorDesc
from stack.umd.service import umd_pb2 as pb
from stack.umd.service import umd_pb2_grpc as pb_grpc
from stack.umd.service.client import UmdClient

F = DType.F32


def _relu(client: UmdClient) -> tuple[int, int, tuple[bytes, ...]]:
    """Device addresses of X and Y (12 floats each) and the blobs of Y = relu(X)."""
    X, Y = client.alloc(48), client.alloc(48)
    req = OpRequest.make(OpKind.RELU, [TensorDesc(X, (3, 4), F)], [TensorDesc(Y, (3, 4), F)])
    return client.resolve(X), client.resolve(Y), client.translate(req, submit=False).blobs


def _code(call: object, msg: object) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(grpc.RpcError) as info:
        call(msg, timeout=5)  # type: ignore[operator]
    return info.value.code(), info.value.details() or ""


def test_a_recorded_buffer_runs_at_each_execute_without_its_blobs(client: UmdClient) -> None:
    X, Y, blobs = _relu(client)
    stub = pb_grpc.InstructionTranslatorStub(client.channel)
    sid = client.session()
    handle = stub.RecordCommands(pb.RecordRequest(session_id=sid, blobs=blobs), timeout=5).cmdbuf
    assert handle != 0
    for fence, seed in ((1, 0), (2, 1)):
        x = np.random.default_rng(seed).standard_normal((3, 4)).astype(np.float32)
        raw = x.tobytes()
        r = stub.Execute(
            pb.ExecuteRequest(
                session_id=sid,
                writes=[pb.TensorWrite(device_addr=X, payload=raw, checksum=zlib.crc32(raw))],
                submits=[pb.SubmitRequest(stream=0, cmdbuf=handle)],
                waits=[pb.FenceRef(stream=0, fence_value=fence)],
                reads=[pb.ReadSpan(device_addr=Y, nbytes=48)],
            ),
            timeout=10,
        )
        assert list(r.fence_values) == [fence]
        np.testing.assert_array_equal(
            np.frombuffer(r.reads[0], np.float32).reshape(3, 4), np.maximum(x, 0)
        )


def test_a_replayed_record_returns_the_same_handle(client: UmdClient) -> None:
    _, _, blobs = _relu(client)
    stub = pb_grpc.InstructionTranslatorStub(client.channel)
    msg = pb.RecordRequest(session_id=client.session(), request_id=7, blobs=blobs)
    first, again = (stub.RecordCommands(msg, timeout=5).cmdbuf for _ in range(2))
    assert first == again != 0


def test_bad_records_and_submissions_are_typed_errors(client: UmdClient) -> None:
    _, _, blobs = _relu(client)
    stub = pb_grpc.InstructionTranslatorStub(client.channel)
    sid = client.session()
    code, details = _code(stub.RecordCommands, pb.RecordRequest(session_id=sid))
    assert (code, details.split(":")[0]) == (grpc.StatusCode.INVALID_ARGUMENT, "field=blobs")
    code, details = _code(stub.RecordCommands, pb.RecordRequest(session_id=sid, blobs=[b"Z" * 64]))
    assert code is grpc.StatusCode.FAILED_PRECONDITION  # the KMD refused the blob, as at submit
    assert details.startswith("create_cmdbuf: unsupported version")
    handle = stub.RecordCommands(pb.RecordRequest(session_id=sid, blobs=blobs), timeout=5).cmdbuf
    both = pb.SubmitRequest(session_id=sid, stream=0, cmdbuf=handle, blobs=blobs)
    code, details = _code(stub.SubmitCommands, both)
    assert (code, details.split(":")[0]) == (grpc.StatusCode.INVALID_ARGUMENT, "field=blobs")
    code, _ = _code(stub.SubmitCommands, pb.SubmitRequest(session_id=sid, cmdbuf=handle + 99))
    assert code is grpc.StatusCode.FAILED_PRECONDITION
    other = stub.CreateSession(pb.CreateSessionRequest(), timeout=5).session_id
    code, _ = _code(stub.SubmitCommands, pb.SubmitRequest(session_id=other, cmdbuf=handle))
    assert code is grpc.StatusCode.FAILED_PRECONDITION  # a handle of another session
    stub.ReleaseCommands(pb.ReleaseRequest(session_id=sid, cmdbuf=handle), timeout=5)
    code, _ = _code(stub.SubmitCommands, pb.SubmitRequest(session_id=sid, cmdbuf=handle))
    assert code is grpc.StatusCode.FAILED_PRECONDITION  # released
    code, _ = _code(stub.ReleaseCommands, pb.ReleaseRequest(session_id=sid, cmdbuf=handle))
    assert code is grpc.StatusCode.FAILED_PRECONDITION
