"""A bounded load test: 8 clients x 500 calls on one server process, zero errors."""

from __future__ import annotations

import sys
import threading
import time

import numpy as np
import pytest

from stack.kmd.blob import decode
from stack.umd import DType, OpKind, OpRequest, TensorDesc
from stack.umd.service.client import RetryPolicy, UmdClient

CLIENTS, CALLS = 8, 500
F = DType.F32


@pytest.mark.slow
def test_eight_clients_five_hundred_calls_each(spawn, record_property) -> None:  # type: ignore[no-untyped-def]
    port = spawn().port
    errors: list[BaseException] = []
    latencies: list[float] = []
    lock = threading.Lock()

    def run(k: int) -> None:
        try:
            with UmdClient(f"127.0.0.1:{port}", policy=RetryPolicy(timeout_s=30)) as c:
                x = np.full((8, 16), k, np.float32)
                X, Y = c.alloc(x.nbytes), c.alloc(x.nbytes)
                c.write(X, x)
                req = OpRequest.make(
                    OpKind.RELU, [TensorDesc(X, (8, 16), F)], [TensorDesc(Y, (8, 16), F)]
                )
                mine, last = [], 0
                for i in range(CALLS):
                    t0 = time.perf_counter()
                    r = c.translate(req, wait=(i % 50 == 49))
                    mine.append(time.perf_counter() - t0)
                    assert r.fence_value == last + 1  # each call submitted exactly once, in order
                    last = r.fence_value
                    assert [p.addr for p in decode(r.blobs[0]).params] == [X, Y]
                np.testing.assert_array_equal(c.read_array(Y, (8, 16), F), x)
            with lock:
                latencies.extend(mine)
        except BaseException as exc:  # noqa: BLE001 - collected and re-raised by the test
            with lock:
                errors.append(exc)

    threads = [threading.Thread(target=run, args=(k,)) for k in range(CLIENTS)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    wall = time.perf_counter() - t0
    assert not errors, errors[:3]
    assert len(latencies) == CLIENTS * CALLS
    p50, p99 = (float(np.percentile(latencies, q) * 1e6) for q in (50, 99))
    record_property("p50_us", round(p50))
    record_property("p99_us", round(p99))
    sys.stderr.write(
        f"load: {CLIENTS}x{CALLS} calls in {wall:.1f}s, p50 {p50:.0f} us, p99 {p99:.0f} us\n"
    )
