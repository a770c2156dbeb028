"""The service on loopback: translation, errors as status codes, reflection, health, data paths."""

from __future__ import annotations

import threading
import time
import zlib
from collections.abc import Callable

import grpc
import numpy as np
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from stack.kmd.blob import decode
from stack.kmd.kernels.ids import KernelId
from stack.umd import DType, OpKind, OpRequest, TensorDesc
from stack.umd.errors import InvalidRequestError, NotFoundError
from stack.umd.service import umd_pb2 as pb
from stack.umd.service import umd_pb2_grpc as pb_grpc
from stack.umd.service.admission import Limits
from stack.umd.service.client import UmdClient
from stack.umd.service.convert import request_to_proto
from stack.umd.service.server import SERVICE_NAME, ServerConfig, UmdServer

F = DType.F32


def _matmul(
    c: UmdClient, m: int = 4, k: int = 8, n: int = 3
) -> tuple[OpRequest, np.ndarray, np.ndarray]:
    a = np.arange(m * k, dtype=np.float32).reshape(m, k) / 10
    b = np.ones((k, n), np.float32)
    A, B, Y = c.alloc(a.nbytes), c.alloc(b.nbytes), c.alloc(m * n * 4)
    c.write(A, a)
    c.write(B, b)
    req = OpRequest.make(
        OpKind.MATMUL,
        [TensorDesc(A, a.shape, F), TensorDesc(B, b.shape, F)],
        [TensorDesc(Y, (m, n), F)],
    )
    return req, a, b


def test_translate_submit_wait_and_read_back(client: UmdClient) -> None:
    req, a, b = _matmul(client)
    r = client.translate(req, wait=True)
    assert r.submitted and r.fence_value == 1 and not r.cache_hit
    blob = decode(r.blobs[0])
    assert blob.kernel_id is KernelId.MATMUL
    assert [p.addr for p in blob.params] == [d.addr for d in (*req.inputs, *req.outputs)]
    y = client.read_array(req.outputs[0].addr, (4, 3), F)
    np.testing.assert_allclose(y, a @ b, rtol=1e-6)
    again = client.translate(req, submit=False)
    assert again.cache_hit and not again.submitted and again.blobs == r.blobs


def test_batch_is_one_command_buffer_in_order(client: UmdClient) -> None:
    x = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)
    X, Y, Z = client.alloc(48), client.alloc(48), client.alloc(48)
    client.write(X, x)
    d = lambda va, s=(3, 4): TensorDesc(va, s, F)  # noqa: E731
    ops = [
        OpRequest.make(OpKind.RELU, [d(X)], [d(Y)]),
        OpRequest.make(OpKind.ADD, [d(Y), d(X)], [d(Z)]),
        OpRequest.make(OpKind.TRANSPOSE, [d(Z)], [d(Y, (4, 3))]),
    ]
    rs = client.translate_batch(ops, wait=True)
    assert [KernelId(r.kernel_id).name for r in rs] == ["RELU", "ADD", "TRANSPOSE"]
    assert len({r.fence_value for r in rs}) == 1
    np.testing.assert_allclose(client.read_array(Y, (4, 3), F), (np.maximum(x, 0) + x).T)


def test_bad_request_is_invalid_argument_naming_the_field(
    client: UmdClient, server: UmdServer
) -> None:
    req, _, _ = _matmul(client)
    m = request_to_proto(req, client.session(), 0)
    m.inputs[1].byte_size += 4
    stub = pb_grpc.InstructionTranslatorStub(client.channel)
    with pytest.raises(grpc.RpcError) as info:
        stub.TranslateOp(m, timeout=5)
    assert info.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert info.value.details().startswith("field=inputs[1].byte_size")
    bad = OpRequest.make(OpKind.MATMUL, req.inputs, [TensorDesc(req.outputs[0].addr, (3, 4), F)])
    with pytest.raises(InvalidRequestError) as err:
        client.translate(bad)
    assert err.value.field == "outputs[0].shape"
    outside = OpRequest.make(OpKind.RELU, [TensorDesc(12, (2,), F)], [TensorDesc(12, (2,), F)])
    with pytest.raises(InvalidRequestError) as err:
        client.translate(outside)
    assert err.value.field == "inputs[0].device_addr"


def test_a_huge_shape_is_invalid_argument_not_unknown(client: UmdClient) -> None:
    va = client.alloc(64)
    side = 1 << 20
    desc = pb.TensorDesc(shape=[side, side], data_type=int(F), byte_size=side * side * 4,
                         device_addr=client.resolve(va))  # fmt: skip
    m = pb.OpRequest(session_id=client.session(), op_type=int(OpKind.RELU),
                     inputs=[desc], outputs=[desc])  # fmt: skip
    stub = pb_grpc.InstructionTranslatorStub(client.channel)
    for translate_only in (True, False):
        m.translate_only = translate_only
        with pytest.raises(grpc.RpcError) as info:
            stub.TranslateOp(m, timeout=5)
        assert info.value.code() is grpc.StatusCode.INVALID_ARGUMENT
        assert info.value.details().startswith("field=inputs[0].device_addr")


def test_unknown_session_is_not_found(client: UmdClient) -> None:
    stub = pb_grpc.InstructionTranslatorStub(client.channel)
    for call, msg in (
        (stub.KeepAlive, pb.KeepAliveRequest(session_id=42)),
        (stub.TranslateOp, pb.OpRequest(session_id=42, op_type=pb.OP_RELU)),
        (stub.DestroySession, pb.DestroySessionRequest(session_id=42)),
    ):
        with pytest.raises(grpc.RpcError) as info:
            call(msg, timeout=5)
        assert info.value.code() is grpc.StatusCode.NOT_FOUND


def test_overload_is_resource_exhausted() -> None:
    from stack.umd import Umd

    umd = Umd("numpy", max_sessions=2)
    srv = UmdServer(ServerConfig(port=0), umd=umd)
    srv.start()
    try:
        stub = pb_grpc.InstructionTranslatorStub(grpc.insecure_channel(f"127.0.0.1:{srv.port}"))
        stub.CreateSession(pb.CreateSessionRequest(), timeout=5)
        stub.CreateSession(pb.CreateSessionRequest(), timeout=5)
        with pytest.raises(grpc.RpcError) as info:
            stub.CreateSession(pb.CreateSessionRequest(), timeout=5)
        assert info.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
    finally:
        srv.stop()
        umd.close()


def test_replayed_request_id_is_not_submitted_twice(client: UmdClient) -> None:
    req, _, _ = _matmul(client)
    stub = pb_grpc.InstructionTranslatorStub(client.channel)
    m = request_to_proto(req, client.session(), 777)
    first = stub.TranslateOp(m, timeout=5)
    second = stub.TranslateOp(m, timeout=5)
    assert first == second and first.fence_value == 1
    m.request_id = 778
    assert stub.TranslateOp(m, timeout=5).fence_value == 2


def _live(srv: UmdServer, session_id: int) -> bool:
    return any(s.key == session_id for s in srv.umd.sessions.live())


def test_keepalive_expiry_over_grpc_frees_memory(poll: Callable[..., bool]) -> None:
    srv = UmdServer(ServerConfig(port=0, backend="numpy"))
    srv.start()
    try:
        stub = pb_grpc.InstructionTranslatorStub(grpc.insecure_channel(f"127.0.0.1:{srv.port}"))
        s = stub.CreateSession(pb.CreateSessionRequest(keepalive_timeout_ms=200), timeout=5)
        stub.AllocMemory(pb.AllocRequest(session_id=s.session_id, nbytes=4096), timeout=5)
        assert srv.umd.device.stats().allocations == 1
        assert poll(lambda: srv.umd.device.stats().allocations == 0)
        assert srv.umd.device.stats().allocations == 0
        with pytest.raises(grpc.RpcError) as info:
            stub.KeepAlive(pb.KeepAliveRequest(session_id=s.session_id), timeout=5)
        assert info.value.code() is grpc.StatusCode.NOT_FOUND
    finally:
        srv.stop()


def test_reflection_lists_the_service(server: UmdServer) -> None:
    stub = reflection_pb2_grpc.ServerReflectionStub(
        grpc.insecure_channel(f"127.0.0.1:{server.port}")
    )
    (resp,) = stub.ServerReflectionInfo(
        iter([reflection_pb2.ServerReflectionRequest(list_services="")])
    )
    names = {s.name for s in resp.list_services_response.service}
    assert SERVICE_NAME == "refstack.umd.v1.InstructionTranslator"
    assert {SERVICE_NAME, "grpc.health.v1.Health"} <= names


def test_health_serving_then_not_serving_while_inflight_calls_finish() -> None:
    # the drain lasts until the upload ends, and the upload waits until the test has seen
    # NOT_SERVING: no thread has to be scheduled inside a fixed window
    srv = UmdServer(ServerConfig(port=0, backend="numpy", drain_s=120.0, grace_s=60.0))
    srv.start()
    chan = grpc.insecure_channel(f"127.0.0.1:{srv.port}")
    health = health_pb2_grpc.HealthStub(chan)
    serving = health_pb2.HealthCheckResponse.SERVING
    assert (
        health.Check(health_pb2.HealthCheckRequest(service=SERVICE_NAME), timeout=5).status
        == serving
    )
    stub = pb_grpc.InstructionTranslatorStub(chan)
    sid = stub.CreateSession(pb.CreateSessionRequest(), timeout=5).session_id
    va = stub.AllocMemory(pb.AllocRequest(session_id=sid, nbytes=1 << 16), timeout=5).device_addr
    started, seen, result = threading.Event(), threading.Event(), {}

    def slow_chunks():  # an upload in flight when shutdown begins
        for i in range(8):
            if i == 1:
                started.set()
            if i == 2:
                seen.wait(120)  # still in flight while the test looks at the draining server
            time.sleep(0.05)
            payload = bytes([i]) * 1024
            yield pb.TensorChunk(
                session_id=sid,
                device_addr=va,
                offset=i * 1024,
                payload=payload,
                checksum=zlib.crc32(payload),
            )

    def upload() -> None:
        result["ack"] = stub.StreamTensorData(slow_chunks(), timeout=120)

    t = threading.Thread(target=upload)
    t.start()
    assert started.wait(60)
    stopper = threading.Thread(target=srv.stop)
    stopper.start()
    deadline = time.monotonic() + 60
    status = serving
    while status == serving and time.monotonic() < deadline:
        request = health_pb2.HealthCheckRequest(service=SERVICE_NAME)
        status = health.Check(request, timeout=5).status
    assert status == health_pb2.HealthCheckResponse.NOT_SERVING
    with pytest.raises(grpc.RpcError) as info:  # new work is refused while draining
        stub.KeepAlive(pb.KeepAliveRequest(session_id=sid), timeout=5)
    assert info.value.code() is grpc.StatusCode.UNAVAILABLE
    seen.set()
    t.join(60)
    stopper.join(60)
    assert result["ack"].bytes_received == 8 * 1024 and result["ack"].chunks == 8


def test_stream_upload_checks_chunk_checksums(client: UmdClient) -> None:
    va = client.alloc(64)
    stub = pb_grpc.InstructionTranslatorStub(client.channel)
    chunk = pb.TensorChunk(
        session_id=client.session(), device_addr=va, payload=b"x" * 8, checksum=1
    )
    with pytest.raises(grpc.RpcError) as info:
        stub.StreamTensorData(iter([chunk]), timeout=5)
    assert info.value.code() is grpc.StatusCode.DATA_LOSS


def test_large_tensor_goes_through_shared_memory(client: UmdClient, server: UmdServer) -> None:
    client.shm_threshold = 1 << 20
    big = np.random.default_rng(1).standard_normal(1 << 19).astype(np.float32)  # 2 MiB
    va = client.alloc(big.nbytes)
    opened = server.service.shm._ids
    before = next(opened)
    client.write(va, big)
    back = client.read_array(va, big.shape, F)
    after = next(opened)
    assert after - before == 3  # one region for the write, one for the read (ids count up)
    np.testing.assert_array_equal(back, big)
    assert len(server.service.shm) == 0  # both regions closed and unlinked
    with pytest.raises(NotFoundError):
        client._raw(
            "CloseSharedMemory",
            pb.CloseShmRequest(session_id=client.session(), region_id=before + 1),
        )


def test_shared_memory_commit_checks_the_checksum(client: UmdClient) -> None:
    from stack.umd.service.shm import attach, buffer_of

    va = client.alloc(4096)
    sid = client.session()
    stub = pb_grpc.InstructionTranslatorStub(client.channel)
    region = stub.OpenSharedMemory(pb.OpenShmRequest(session_id=sid, nbytes=4096), timeout=5)
    shm = attach(region.name)
    buffer_of(shm)[:4] = b"abcd"
    shm.close()
    transfer = pb.ShmTransfer(
        session_id=sid,
        region_id=region.region_id,
        device_addr=va,
        nbytes=4,
        checksum=zlib.crc32(b"abce"),
    )
    with pytest.raises(grpc.RpcError) as info:
        stub.CommitSharedMemory(transfer, timeout=5)
    assert info.value.code() is grpc.StatusCode.DATA_LOSS
    transfer.checksum = zlib.crc32(b"abcd")
    assert stub.CommitSharedMemory(transfer, timeout=5).checksum == zlib.crc32(b"abcd")
    assert client.read(va, 4) == b"abcd"


def test_echo_is_the_transport_floor(client: UmdClient) -> None:
    assert client.echo(b"ping") == b"ping"


def test_lost_session_is_recreated_and_addresses_remapped(
    client: UmdClient, server: UmdServer
) -> None:
    req, a, b = _matmul(client)
    client.translate(req, wait=True)
    server.umd.sessions.destroy(client.session())  # the session vanishes under the client
    server.umd.create_session().alloc(1 << 20)  # and the address space moves on
    r = client.translate(req, wait=True)  # NOT_FOUND -> new session, memory + data replayed
    assert client.recoveries == 1
    moved = client.resolve(req.inputs[0].addr)
    assert moved != req.inputs[0].addr
    assert decode(r.blobs[0]).params[0].addr == moved
    np.testing.assert_allclose(client.read_array(req.outputs[0].addr, (4, 3), F), a @ b, rtol=1e-6)


def test_max_message_size_is_configurable() -> None:
    small = UmdServer(ServerConfig(port=0, backend="numpy", max_message_bytes=1 << 20))
    small.start()
    default = UmdServer(ServerConfig(port=0, backend="numpy"))
    default.start()
    try:
        big = pb.EchoRequest(payload=b"x" * (2 << 20))
        opts = [
            ("grpc.max_send_message_length", 64 << 20),
            ("grpc.max_receive_message_length", 64 << 20),
        ]
        for srv, ok in ((small, False), (default, True)):
            stub = pb_grpc.InstructionTranslatorStub(
                grpc.insecure_channel(f"127.0.0.1:{srv.port}", opts)
            )
            if ok:
                assert len(stub.Echo(big, timeout=10).payload) == 2 << 20
            else:
                with pytest.raises(grpc.RpcError) as info:
                    stub.Echo(big, timeout=10)
                assert info.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
        assert default.config.max_message_bytes == 64 << 20
    finally:
        small.stop()
        default.stop()


def test_keepalive_keeps_a_session_alive(poll: Callable[..., bool]) -> None:
    srv = UmdServer(ServerConfig(port=0, backend="numpy"))
    srv.start()
    try:
        stub = pb_grpc.InstructionTranslatorStub(grpc.insecure_channel(f"127.0.0.1:{srv.port}"))
        # 5 s: a loaded machine may pause the keepalive loop for seconds without losing it
        live = stub.CreateSession(pb.CreateSessionRequest(keepalive_timeout_ms=5000), timeout=5)
        idle = stub.CreateSession(pb.CreateSessionRequest(keepalive_timeout_ms=300), timeout=5)
        assert live.keepalive_timeout_ms == 5000
        start = time.monotonic()

        def idle_gone_after_two_live_timeouts() -> bool:
            stub.KeepAlive(pb.KeepAliveRequest(session_id=live.session_id), timeout=5)
            return not _live(srv, idle.session_id) and time.monotonic() - start > 10.0

        assert poll(idle_gone_after_two_live_timeouts)
        stub.KeepAlive(pb.KeepAliveRequest(session_id=live.session_id), timeout=5)
        with pytest.raises(grpc.RpcError) as info:
            stub.KeepAlive(pb.KeepAliveRequest(session_id=idle.session_id), timeout=5)
        assert info.value.code() is grpc.StatusCode.NOT_FOUND
    finally:
        srv.stop()


def test_refstack_umd_serve_runs_until_sigterm() -> None:
    import subprocess
    import sys

    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from stack.cli import main; main()",
            "umd",
            "serve",
            "--port",
            "0",
            "--backend",
            "numpy",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert line.startswith("port=")
        with UmdClient(f"127.0.0.1:{int(line.split('=')[1])}") as c:
            assert c.echo(b"hi") == b"hi"
        proc.terminate()
        assert proc.wait(20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()


def test_client_free_releases_device_memory(client: UmdClient, server: UmdServer) -> None:
    va = client.alloc(4096)
    client.write(va, b"\x01" * 16)
    before = server.umd.device.stats().allocations
    client.free(va)
    assert server.umd.device.stats().allocations == before - 1
    assert not client._writes  # nothing left to replay for it
    with pytest.raises(InvalidRequestError):
        client.translate(
            OpRequest.make(OpKind.RELU, [TensorDesc(va, (4,), F)], [TensorDesc(va, (4,), F)])
        )


def test_background_keepalive_holds_the_session(
    server: UmdServer, poll: Callable[..., bool]
) -> None:
    target = f"127.0.0.1:{server.port}"
    with (
        # timeouts of seconds: a loaded machine may pause a thread for that long without
        # the idle session expiring before its first writes or the kept one between beats
        UmdClient(target, keepalive_timeout_ms=5000, keepalive_interval_s=0.1) as kept,
        UmdClient(target, keepalive_timeout_ms=2000) as idle,
    ):
        k, i = kept.session(), idle.session()
        va = idle.alloc(64)
        idle.write(va, b"\x07" * 64)
        start = time.monotonic()
        assert poll(lambda: not _live(server, i) and time.monotonic() - start > 10.0)
        assert kept.session() == k
        server.umd.sessions.get(k)  # still live after two of its timeouts
        assert idle.read(va, 64) == b"\x07" * 64  # expired meanwhile; recovered transparently
        assert idle.session() != i and idle.recoveries == 1 and kept.recoveries == 0


def test_calls_beyond_max_inflight_are_resource_exhausted() -> None:
    srv = UmdServer(ServerConfig(port=0, backend="numpy", limits=Limits(max_inflight=1)))
    srv.start()
    try:
        stub = pb_grpc.InstructionTranslatorStub(grpc.insecure_channel(f"127.0.0.1:{srv.port}"))
        sid = stub.CreateSession(pb.CreateSessionRequest(), timeout=5).session_id
        va = stub.AllocMemory(pb.AllocRequest(session_id=sid, nbytes=4096), timeout=5).device_addr
        inside, release = threading.Event(), threading.Event()

        def held():  # an upload that stays in flight until released
            payload = b"\x00" * 16
            yield pb.TensorChunk(
                session_id=sid, device_addr=va, payload=payload, checksum=zlib.crc32(payload)
            )
            inside.set()
            release.wait(120)

        t = threading.Thread(target=lambda: stub.StreamTensorData(held(), timeout=180))
        t.start()
        assert inside.wait(60)
        deadline = time.monotonic() + 60
        while srv.service.admission.inflight < 1 and time.monotonic() < deadline:
            time.sleep(0.01)
        with pytest.raises(grpc.RpcError) as info:
            stub.KeepAlive(pb.KeepAliveRequest(session_id=sid), timeout=5)
        assert info.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
        release.set()
        t.join(60)
        stub.KeepAlive(pb.KeepAliveRequest(session_id=sid), timeout=5)  # capacity is back
    finally:
        srv.stop()
