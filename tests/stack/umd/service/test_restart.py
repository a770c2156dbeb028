"""A server killed and restarted mid-run: the client recovers and loses no result."""

from __future__ import annotations

import threading
import time

import numpy as np
import pytest

from stack.umd import DType, OpKind, OpRequest, TensorDesc
from stack.umd.service.client import RetryPolicy, UmdClient

F = DType.F32


@pytest.mark.slow
def test_kill_and_restart_mid_run_loses_no_result(spawn) -> None:  # type: ignore[no-untyped-def]
    first = spawn()
    port = first.port  # the restart binds the port its predecessor held
    rng = np.random.default_rng(5)
    b = rng.standard_normal((8, 4)).astype(np.float32)
    with UmdClient(f"127.0.0.1:{port}", policy=RetryPolicy(timeout_s=30, retry_window_s=120)) as c:
        A, B, Y = c.alloc(6 * 8 * 4), c.alloc(b.nbytes), c.alloc(6 * 4 * 4)
        c.write(B, b)
        req = OpRequest.make(
            OpKind.MATMUL,
            [TensorDesc(A, (6, 8), F), TensorDesc(B, (8, 4), F)],
            [TensorDesc(Y, (6, 4), F)],
        )
        restarter = None
        for i in range(40):
            if i == 15:  # kill -9 mid-run; a new server comes up on the same port a bit later
                first.kill()
                restarter = threading.Thread(target=lambda: (time.sleep(0.5), spawn(port)))
                restarter.start()
            a = rng.standard_normal((6, 8)).astype(np.float32)
            c.write(A, a)
            r = c.translate(req, wait=True)
            assert r.submitted
            np.testing.assert_allclose(c.read_array(Y, (6, 4), F), a @ b, rtol=1e-5, atol=1e-6)
        assert restarter is not None
        restarter.join()
        assert c.recoveries == 1 and c.retries > 0
        # the caller's addresses keep working; the client remaps them if the server moved them
        assert c.resolve(A) >= 0


def test_sigterm_shuts_down_cleanly(spawn) -> None:  # type: ignore[no-untyped-def]
    srv = spawn()
    with UmdClient(f"127.0.0.1:{srv.port}") as c:
        assert c.echo(b"x") == b"x"
    assert srv.terminate() == 0
