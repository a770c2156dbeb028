"""A client hogging waits against well-behaved clients: the figures of ``refstack bench umd-hog``.

One *hog* opens a session and fires ``hog_calls`` ``WaitFence`` calls at once for a fence value
that is never reached, with an hour-long ``timeout_ms`` and no deadline. Meanwhile ``clients``
well-behaved clients (each its own channel and session, KeepAlive every quarter of its timeout)
send ``echoes`` Echo calls each and, every ``wait_every`` echoes, a translation that waits for
its own small op. The same clients first run once without the hog (the baseline, same run).

Reported: the Echo p50/p99 in milliseconds with and without the hog, how many hog calls the
server admitted and refused (RESOURCE_EXHAUSTED), how many well-behaved calls failed and how
many well-behaved sessions were lost (a client had to recover its session). The goal: Echo p99
under the hog ≤ 50 ms, no session lost.
"""

from __future__ import annotations

import statistics
import threading
import time
from dataclasses import asdict, dataclass
from typing import Any

import grpc
import numpy as np

from stack.errors import UmdError
from stack.kmd.dtypes import DType
from stack.umd.ops import OpKind, OpRequest, TensorDesc
from stack.umd.service import umd_pb2 as pb
from stack.umd.service import umd_pb2_grpc as pb_grpc
from stack.umd.service.client import RetryPolicy, UmdClient

_FAR = 1 << 62


@dataclass(frozen=True, slots=True)
class HogReport:
    """Figures of one hog run (see the module docstring)."""

    hog_calls: int
    hog_admitted: int
    hog_refused: int
    clients: int
    echo_calls: int
    failed_calls: int
    sessions_lost: int
    baseline_echo_p50_ms: float
    baseline_echo_p99_ms: float
    echo_p50_ms: float
    echo_p99_ms: float

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True, slots=True)
class _Round:
    latencies_ms: tuple[float, ...]
    failed: int
    lost: int


def _p(values: tuple[float, ...], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 3)


def _behave(target: str, echoes: int, wait_every: int, out: list[_Round], lock: Any) -> None:
    lat: list[float] = []
    failed = 0
    policy = RetryPolicy(timeout_s=30.0, retry_window_s=30.0)
    with UmdClient(target, policy=policy, keepalive_timeout_ms=2000, keepalive_interval_s=0.5) as c:
        x = np.arange(16, dtype=np.float32) - 8
        X, Y = c.alloc(x.nbytes), c.alloc(x.nbytes)
        c.write(X, x)
        relu = OpRequest.make(
            OpKind.RELU, [TensorDesc(X, (16,), DType.F32)], [TensorDesc(Y, (16,), DType.F32)]
        )
        sid = c.session()
        for i in range(echoes):
            t0 = time.perf_counter()
            try:
                c.echo(b"ping")
                lat.append((time.perf_counter() - t0) * 1e3)
                if wait_every and i % wait_every == 0:
                    c.translate(relu, wait=True)
            except UmdError:
                failed += 1
        lost = int(c.recoveries > 0 or c.session() != sid)
        if not np.array_equal(c.read_array(Y, (16,), DType.F32), np.maximum(x, 0)):
            failed += 1
    with lock:
        out.append(_Round(tuple(lat), failed, lost))


def _clients(target: str, clients: int, echoes: int, wait_every: int) -> _Round:
    out: list[_Round] = []
    lock = threading.Lock()
    threads = [
        threading.Thread(target=_behave, args=(target, echoes, wait_every, out, lock))
        for _ in range(clients)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    lat = tuple(v for r in out for v in r.latencies_ms)
    failed = sum(r.failed for r in out) + (clients - len(out))
    return _Round(lat, failed, sum(r.lost for r in out))


def run_hog(
    target: str, *, hog_calls: int = 64, clients: int = 4, echoes: int = 100, wait_every: int = 10
) -> HogReport:
    """Measure the server at ``target`` (``host:port``) under a hog; see the module docstring."""
    baseline = _clients(target, clients, echoes, wait_every)
    channel = grpc.insecure_channel(target)
    try:
        stub = pb_grpc.InstructionTranslatorStub(channel)
        sid = stub.CreateSession(pb.CreateSessionRequest(), timeout=30).session_id
        req = pb.WaitFenceRequest(session_id=sid, fence_value=_FAR, timeout_ms=3_600_000)
        hog = [stub.WaitFence.future(req) for _ in range(hog_calls)]
        _settle(hog)
        hogged = _clients(target, clients, echoes, wait_every)
        refused = sum(
            1 for f in hog if f.done() and f.exception() is not None
            and f.code() is grpc.StatusCode.RESOURCE_EXHAUSTED
        )  # fmt: skip
        for f in hog:
            f.cancel()
    finally:
        channel.close()
    return HogReport(
        hog_calls=hog_calls,
        hog_admitted=hog_calls - refused,
        hog_refused=refused,
        clients=clients,
        echo_calls=len(hogged.latencies_ms),
        failed_calls=hogged.failed,
        sessions_lost=hogged.lost,
        baseline_echo_p50_ms=round(statistics.median(baseline.latencies_ms or (0.0,)), 3),
        baseline_echo_p99_ms=_p(baseline.latencies_ms, 0.99),
        echo_p50_ms=round(statistics.median(hogged.latencies_ms or (0.0,)), 3),
        echo_p99_ms=_p(hogged.latencies_ms, 0.99),
    )


def _settle(hog: list[Any], timeout_s: float = 30.0) -> None:
    """Wait until the server has refused the hog calls it refuses (they complete at once; the
    admitted ones stay pending): until no call completed for 0.5 s, or ``timeout_s``."""
    end = time.monotonic() + timeout_s
    done, quiet_since = -1, time.monotonic()
    while time.monotonic() < end:
        now_done = sum(1 for f in hog if f.done())
        if now_done != done:
            done, quiet_since = now_done, time.monotonic()
        elif time.monotonic() - quiet_since > 0.5:
            break
        time.sleep(0.02)
