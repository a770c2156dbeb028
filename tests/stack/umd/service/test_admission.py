"""Admission on loopback: waits hold no worker thread, nobody starves, shutdown answers waits."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

import grpc
import pytest

from stack.umd.errors import UmdTimeoutError
from stack.umd.service import umd_pb2 as pb
from stack.umd.service import umd_pb2_grpc as pb_grpc
from stack.umd.service.admission import Admission, Limits
from stack.umd.service.client import UmdClient
from stack.umd.service.hog import run_hog
from stack.umd.service.server import ServerConfig, UmdServer

FAR = 1 << 62
HOUR_MS = 3_600_000


@pytest.fixture
def srv() -> Iterator[UmdServer]:
    server = UmdServer(ServerConfig(port=0, backend="numpy", drain_s=5.0, grace_s=5.0))
    server.start()
    yield server
    server.stop()


def _stub(srv: UmdServer) -> tuple[grpc.Channel, pb_grpc.InstructionTranslatorStub]:
    chan = grpc.insecure_channel(f"127.0.0.1:{srv.port}")
    return chan, pb_grpc.InstructionTranslatorStub(chan)


def test_a_hog_of_64_waits_starves_none_of_4_clients(
    srv: UmdServer, poll: Callable[..., bool]
) -> None:
    report = run_hog(f"127.0.0.1:{srv.port}", hog_calls=64, clients=4, echoes=20, wait_every=5)
    limits = srv.service.admission.limits
    assert (report.hog_admitted, report.hog_refused) == (
        limits.waits_per_client,
        64 - limits.waits_per_client,
    )
    assert report.echo_calls == 4 * 20
    assert (report.failed_calls, report.sessions_lost) == (0, 0)
    # the hog's channel is closed: its admitted waits end instead of holding threads
    assert poll(lambda: srv.service.admission.waiting == 0)
    assert srv.service.admission.waiting == 0


def test_waits_are_capped_server_side(srv: UmdServer) -> None:
    small = UmdServer(ServerConfig(port=0, backend="numpy", limits=Limits(max_wait_s=0.2)))
    small.start()
    try:
        chan, stub = _stub(small)
        sid = stub.CreateSession(pb.CreateSessionRequest(), timeout=5).session_id
        with pytest.raises(grpc.RpcError) as info:  # no client deadline, an hour asked
            stub.WaitFence(pb.WaitFenceRequest(session_id=sid, fence_value=FAR, timeout_ms=HOUR_MS))
        assert info.value.code() is grpc.StatusCode.DEADLINE_EXCEEDED
        assert "capped at 0.2 s" in (info.value.details() or "")
        with UmdClient(f"127.0.0.1:{small.port}") as c, pytest.raises(UmdTimeoutError):
            c.wait_fence(FAR, timeout_s=0.5)  # repeated past the cap, then its own timeout
        chan.close()
    finally:
        small.stop()


def test_calls_beyond_the_session_limit_are_resource_exhausted(poll: Callable[..., bool]) -> None:
    server = UmdServer(
        ServerConfig(port=0, backend="numpy", limits=Limits(per_session=1, max_wait_s=30))
    )
    server.start()
    try:
        chan, stub = _stub(server)
        busy = stub.CreateSession(pb.CreateSessionRequest(), timeout=5).session_id
        other = stub.CreateSession(pb.CreateSessionRequest(), timeout=5).session_id
        held = stub.WaitFence.future(pb.WaitFenceRequest(session_id=busy, fence_value=FAR))
        assert poll(lambda: server.service.admission.waiting == 1)
        with pytest.raises(grpc.RpcError) as info:
            stub.KeepAlive(pb.KeepAliveRequest(session_id=busy), timeout=5)
        assert info.value.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "in this session" in (info.value.details() or "")
        stub.KeepAlive(pb.KeepAliveRequest(session_id=other), timeout=5)  # others are served
        held.cancel()
        assert poll(lambda: server.service.admission.inflight == 0)
        stub.KeepAlive(pb.KeepAliveRequest(session_id=busy), timeout=5)
        chan.close()
    finally:
        server.stop()


def test_a_session_waiting_longer_than_its_keepalive_does_not_expire(srv: UmdServer) -> None:
    chan, stub = _stub(srv)
    sid = stub.CreateSession(
        pb.CreateSessionRequest(keepalive_timeout_ms=200), timeout=5
    ).session_id
    with pytest.raises(grpc.RpcError) as info:  # 1.5 s inside one call, 7 keepalive timeouts
        stub.WaitFence(pb.WaitFenceRequest(session_id=sid, fence_value=FAR, timeout_ms=1500))
    assert info.value.code() is grpc.StatusCode.DEADLINE_EXCEEDED
    stub.KeepAlive(pb.KeepAliveRequest(session_id=sid), timeout=5)  # still there
    assert srv.umd.sessions.expired_count == 0
    chan.close()


def test_shutdown_answers_pending_waits_unavailable(poll: Callable[..., bool]) -> None:
    server = UmdServer(ServerConfig(port=0, backend="numpy", drain_s=30.0, grace_s=30.0))
    server.start()
    chan, stub = _stub(server)
    sid = stub.CreateSession(pb.CreateSessionRequest(), timeout=5).session_id
    req = pb.WaitFenceRequest(session_id=sid, fence_value=FAR, timeout_ms=HOUR_MS)
    waits = [stub.WaitFence.future(req) for _ in range(3)]
    assert poll(lambda: server.service.admission.waiting == 3)
    stopper = threading.Thread(target=server.stop)
    stopper.start()
    codes = [w.exception(timeout=60).code() for w in waits]  # type: ignore[union-attr]
    assert codes == [grpc.StatusCode.UNAVAILABLE] * 3
    stopper.join(60)
    assert server.wait(0)  # stopped: the waits did not hold it for their hour
    chan.close()


def test_admission_counts_return_to_zero() -> None:
    a = Admission(Limits(per_client=2, waits_per_client=1, max_waits=1))
    first = a.enter("c1", 7, waits=True)
    with pytest.raises(Exception, match="waits in flight"):
        a.enter("c2", 8, waits=True)
    second = a.enter("c1", 7, waits=False)
    with pytest.raises(Exception, match="from this client"):
        a.enter("c1", 9, waits=False)
    assert (a.inflight, a.waiting, a.refused, a.busy(7)) == (2, 1, 2, True)
    a.leave(first)
    a.leave(second)
    assert (a.inflight, a.waiting, a.busy(7)) == (0, 0, False)


def test_waits_hold_no_worker_thread(poll: Callable[..., bool]) -> None:
    """Twelve waits on a server with two worker threads: other calls are still served, and
    each wait ends with the fence it waits for."""
    limits = Limits(max_waits=16, waits_per_client=16, per_client=32, per_session=16)
    server = UmdServer(
        ServerConfig(port=0, backend="numpy", max_workers=2, limits=limits, drain_s=0.2)
    )
    server.start()
    chan, stub = _stub(server)
    try:
        sid = stub.CreateSession(pb.CreateSessionRequest(), timeout=30).session_id
        waits = [
            stub.WaitFence.future(
                pb.WaitFenceRequest(session_id=sid, fence_value=FAR, timeout_ms=HOUR_MS)
            )
            for _ in range(12)
        ]
        assert poll(lambda: server.service.admission.waiting == 12)
        for _ in range(5):  # every one needs a worker thread: both must be free
            assert stub.Echo(pb.EchoRequest(payload=b"x"), timeout=30).payload == b"x"
            other = stub.CreateSession(pb.CreateSessionRequest(), timeout=30).session_id
            assert stub.KeepAlive(pb.KeepAliveRequest(session_id=other), timeout=30).code == 0
        assert [w.done() for w in waits] == [False] * 12
        for w in waits:
            w.cancel()
        assert poll(lambda: server.service.admission.waiting == 0)
        assert server.service._waiters == set()
    finally:
        chan.close()
        server.stop()
