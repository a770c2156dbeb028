"""Hostile input: random bytes and mutated messages never crash the server.

Every answer must be a deliberate status: OK or one of the codes the proto documents. UNKNOWN
(what gRPC returns when a handler raises something unplanned) fails the test; INTERNAL is
accepted only for gRPC's own "could not deserialize the request"; DEADLINE_EXCEEDED only for a
call that waits by design (``WaitFence``, or a translation that asked to ``wait``).
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import grpc
import pytest
from google.protobuf.message import DecodeError, Message

from stack.kmd.device import KmdDevice
from stack.umd import DType, OpKind, Umd
from stack.umd.service import umd_pb2 as pb
from stack.umd.service import umd_pb2_grpc as pb_grpc
from stack.umd.service.server import SERVICE_NAME, ServerConfig, UmdServer

DELIBERATE = {
    grpc.StatusCode.OK,
    grpc.StatusCode.INVALID_ARGUMENT,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
    grpc.StatusCode.FAILED_PRECONDITION,
    grpc.StatusCode.DATA_LOSS,
}
WAITING: dict[str, type[Message]] = {
    "WaitFence": pb.WaitFenceRequest,
    "TranslateOp": pb.OpRequest,
    "TranslateOpsBatch": pb.BatchOpRequest,
    "Execute": pb.ExecuteRequest,
}
UNARY = [m.name for m in pb.DESCRIPTOR.services_by_name["InstructionTranslator"].methods
         if not m.client_streaming and not m.server_streaming]  # fmt: skip


@pytest.fixture(scope="module")
def served() -> Iterator[tuple[UmdServer, grpc.Channel]]:
    umd = Umd(device=KmdDevice("numpy", memory_limit=64 << 20), max_sessions=64)
    srv = UmdServer(ServerConfig(port=0, session_timeout_s=60), umd=umd)
    srv.start()
    chan = grpc.insecure_channel(f"127.0.0.1:{srv.port}")
    yield srv, chan
    chan.close()
    srv.stop()
    umd.close()
    umd.device.close()


def waits_by_design(method: str, data: bytes) -> bool:
    """True if the server, parsing ``data`` as ``method``'s request, would block on a fence."""
    kind = WAITING.get(method)
    if kind is None:
        return False
    try:
        msg = kind.FromString(data)
    except DecodeError:
        return False
    if method == "Execute":
        return len(msg.waits) > 0  # type: ignore[attr-defined]
    return method == "WaitFence" or bool(getattr(msg, "wait", False))


def _check(code: grpc.StatusCode, details: str, what: str, waits: bool = False) -> None:
    if code is grpc.StatusCode.DEADLINE_EXCEEDED:
        assert waits, f"{what}: DEADLINE_EXCEEDED on a call that does not wait"
        return
    if code is grpc.StatusCode.INTERNAL:
        assert "deserializ" in details.lower(), f"{what}: INTERNAL {details}"
        return
    assert code in DELIBERATE, f"{what}: {code} {details}"


def _raw_call(chan: grpc.Channel, method: str, data: bytes) -> None:
    call = chan.unary_unary(f"/{SERVICE_NAME}/{method}")  # identity (bytes) serializers
    try:
        call(data, timeout=10)
        code, details = grpc.StatusCode.OK, ""
    except grpc.RpcError as err:
        code, details = err.code(), err.details() or ""
    _check(code, details, f"{method}({data[:16]!r}...)", waits_by_design(method, data))


def test_random_bytes_to_every_unary_method(served: tuple[UmdServer, grpc.Channel]) -> None:
    _, chan = served
    rng = random.Random(1)
    for i in range(1500):
        method = UNARY[i % len(UNARY)]
        _raw_call(chan, method, rng.randbytes(rng.randrange(0, 200)))


def _valid_messages(stub: pb_grpc.InstructionTranslatorStub) -> list[tuple[str, bytes]]:
    sid = stub.CreateSession(pb.CreateSessionRequest(), timeout=5).session_id
    va = stub.AllocMemory(pb.AllocRequest(session_id=sid, nbytes=4096), timeout=5).device_addr
    desc = pb.TensorDesc(shape=[4, 8], data_type=pb.DT_F32, byte_size=128, device_addr=va)
    out = pb.TensorDesc(shape=[4, 8], data_type=pb.DT_F32, byte_size=128, device_addr=va + 128)
    op = pb.OpRequest(session_id=sid, request_id=1, op_type=pb.OP_SOFTMAX,
                      inputs=[desc], outputs=[out],
                      attrs={"axis": pb.AttrValue(i=1)}, translate_only=True)  # fmt: skip
    return [
        ("TranslateOp", op.SerializeToString()),
        (
            "TranslateOpsBatch",
            pb.BatchOpRequest(
                session_id=sid, ops=[op, op], translate_only=True
            ).SerializeToString(),
        ),
        ("AllocMemory", pb.AllocRequest(session_id=sid, nbytes=256).SerializeToString()),
        (
            "WaitFence",
            pb.WaitFenceRequest(session_id=sid, fence_value=0, timeout_ms=10).SerializeToString(),
        ),
        ("OpenSharedMemory", pb.OpenShmRequest(session_id=sid, nbytes=64).SerializeToString()),
        ("FreeMemory", pb.FreeRequest(session_id=sid, device_addr=va + 1).SerializeToString()),
        ("CreateStream", pb.StreamRequest(session_id=sid).SerializeToString()),
        ("ResetStream", pb.StreamRequest(session_id=sid, stream=0).SerializeToString()),
        (
            "SubmitCommands",
            pb.SubmitRequest(session_id=sid, stream=0, blobs=[b"\x5a" * 64]).SerializeToString(),
        ),
        (
            "RecordCommands",
            pb.RecordRequest(session_id=sid, blobs=[b"\x5a" * 64]).SerializeToString(),
        ),
        ("ReleaseCommands", pb.ReleaseRequest(session_id=sid, cmdbuf=1).SerializeToString()),
        (
            "SubmitCommands",
            pb.SubmitRequest(session_id=sid, stream=0, cmdbuf=1).SerializeToString(),
        ),
        (
            "Execute",
            pb.ExecuteRequest(
                session_id=sid,
                writes=[pb.TensorWrite(device_addr=va, payload=b"\x01" * 8, checksum=0)],
                waits=[pb.FenceRef(stream=0, fence_value=0)],
                timeout_ms=10,
                reads=[pb.ReadSpan(device_addr=va, nbytes=8)],
            ).SerializeToString(),
        ),
    ]


def _mutate(rng: random.Random, data: bytes) -> bytes:
    b = bytearray(data)
    for _ in range(rng.randrange(1, 4)):
        kind = rng.randrange(4)
        if kind == 0 and b:
            b[rng.randrange(len(b))] = rng.randrange(256)
        elif kind == 1 and b:
            del b[rng.randrange(len(b)) :]
        elif kind == 2:
            pos = rng.randrange(len(b) + 1)
            b[pos:pos] = rng.randbytes(rng.randrange(1, 8))
        elif b:
            i = rng.randrange(len(b))
            b[i] ^= 1 << rng.randrange(8)
    return bytes(b)


def test_mutated_valid_messages(served: tuple[UmdServer, grpc.Channel]) -> None:
    srv, chan = served
    msgs = _valid_messages(pb_grpc.InstructionTranslatorStub(chan))
    rng = random.Random(2)
    for i in range(2000):
        method, data = msgs[i % len(msgs)]
        _raw_call(chan, method, _mutate(rng, data))
    srv.service.shm.close_all()


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # kernels on garbage data: inf/nan is fine
def test_random_structured_requests(served: tuple[UmdServer, grpc.Channel]) -> None:
    """Well-formed messages with random ops, shapes, dtypes, attrs and addresses."""
    _, chan = served
    stub = pb_grpc.InstructionTranslatorStub(chan)
    sid = stub.CreateSession(pb.CreateSessionRequest(), timeout=5).session_id
    va = stub.AllocMemory(pb.AllocRequest(session_id=sid, nbytes=1 << 16), timeout=5).device_addr
    rng = random.Random(3)
    names = [
        "axis",
        "perm",
        "strides",
        "pads",
        "kernel_shape",
        "group",
        "trans_a",
        "alpha",
        "epsilon",
        "value",
        "relu",
    ]

    def tensor(plausible: bool = False) -> pb.TensorDesc:
        shape = [rng.choice([1, 2, 3, 4, 8]) for _ in range(rng.randrange(0, 5))]
        if shape and rng.random() < 0.05:  # a giant dim: refused before any translation
            shape[rng.randrange(len(shape))] = rng.choice([1 << 20, 1 << 31, 1 << 40])
        dt = rng.choice(list(DType))
        if plausible:  # same shape and dtype everywhere: many ops accept it
            shape, dt = [2, 4, 4, 4], DType.F32
        n = dt.itemsize
        for d in shape:
            n *= d
        addr = va + 512 * rng.randrange(0, 64) if rng.random() < 0.9 else rng.randrange(1 << 64)
        return pb.TensorDesc(shape=shape, data_type=int(dt), byte_size=n, device_addr=addr,
                             layout=rng.choice([0, 0, 0, 1, 2]))  # fmt: skip

    def attr() -> pb.AttrValue:
        k = rng.randrange(5)
        if k == 0:
            return pb.AttrValue(i=rng.randrange(-3, 5))
        if k == 1:
            return pb.AttrValue(f=rng.uniform(-2, 2))
        if k == 2:
            return pb.AttrValue(s="x")
        if k == 3:
            return pb.AttrValue(
                ints=pb.IntList(values=[rng.randrange(-2, 5) for _ in range(rng.randrange(0, 5))])
            )
        return pb.AttrValue(floats=pb.FloatList(values=[rng.random()]))

    codes: dict[grpc.StatusCode, int] = {}
    # About 1 request in 80 gets past validation: 3000 keep the count well above 20 whichever
    # op each request draws (every op kind added shifts the draws; 1500 gave 21, then 17).
    for i in range(3000):
        p = i % 2 == 0
        m = pb.OpRequest(
            session_id=sid, request_id=0, op_type=rng.choice(list(OpKind)).value,
            inputs=[tensor(p) for _ in range(rng.randrange(0, 4))],
            outputs=[tensor(p) for _ in range(rng.randrange(0, 2))],
            attrs={rng.choice(names): attr() for _ in range(rng.randrange(0, 3))},
            translate_only=i % 4 != 0,
        )  # fmt: skip
        try:
            stub.TranslateOp(m, timeout=10)
            code, details = grpc.StatusCode.OK, ""
        except grpc.RpcError as err:
            code, details = err.code(), err.details() or ""
        codes[code] = codes.get(code, 0) + 1
        _check(code, details, f"TranslateOp({m})", m.wait)
    assert codes.get(grpc.StatusCode.INVALID_ARGUMENT, 0) > 100  # the fuzz reached validation
    assert codes.get(grpc.StatusCode.OK, 0) > 20  # ... and got past it, into translation


def test_server_still_serves_after_the_fuzz(served: tuple[UmdServer, grpc.Channel]) -> None:
    _, chan = served
    stub = pb_grpc.InstructionTranslatorStub(chan)
    assert stub.Echo(pb.EchoRequest(payload=b"ok"), timeout=5).payload == b"ok"
    sid = stub.CreateSession(pb.CreateSessionRequest(), timeout=5).session_id
    stub.DestroySession(pb.DestroySessionRequest(session_id=sid), timeout=5)


def test_random_bytes_to_the_streaming_methods(served: tuple[UmdServer, grpc.Channel]) -> None:
    _, chan = served
    rng = random.Random(4)
    upload = chan.stream_unary(f"/{SERVICE_NAME}/StreamTensorData")
    download = chan.unary_stream(f"/{SERVICE_NAME}/ReadTensorData")
    for i in range(300):
        frames = [rng.randbytes(rng.randrange(0, 64)) for _ in range(rng.randrange(0, 4))]
        try:
            if i % 2:
                upload(iter(frames), timeout=10)
            else:
                list(download(frames[0] if frames else b"", timeout=10))
            code, details = grpc.StatusCode.OK, ""
        except grpc.RpcError as err:
            code, details = err.code(), err.details() or ""
        _check(code, details, f"stream #{i}")
