"""Sessions on the NumPy device: results, batches in order, streams, faults, expiry."""

from __future__ import annotations

import time

import numpy as np
import pytest

from stack.umd import (
    DeviceFaultError,
    DType,
    FaultKind,
    Layout,
    OpKind,
    OpRequest,
    TensorDesc,
    Umd,
    UmdSession,
)
from stack.umd.errors import ClosedError, SessionNotFoundError

F = DType.F32
rng = np.random.default_rng(0)


def _put(s: UmdSession, arr: np.ndarray) -> TensorDesc:
    va = s.alloc(arr.nbytes)
    s.write(va, arr)
    return TensorDesc(va, arr.shape, DType.from_numpy(arr.dtype))


def _out(s: UmdSession, shape: tuple[int, ...], layout: Layout = Layout.ANY) -> TensorDesc:
    return TensorDesc(s.alloc(int(np.prod(shape)) * 4), shape, F, layout)


def test_gemm_runs_and_matches_numpy(session: UmdSession) -> None:
    a, b, c = (rng.standard_normal(s).astype(np.float32) for s in ((5, 7), (7, 3), (3,)))
    A, B, C, Y = _put(session, a), _put(session, b), _put(session, c), _out(session, (5, 3))
    st = session.create_stream()
    t = session.translate(OpRequest.make(OpKind.GEMM, [A, B, C], [Y], alpha=2.0, relu=1))
    session.wait(session.submit(st, [t]), 10)
    np.testing.assert_allclose(
        session.read(Y.addr, (5, 3), F), np.maximum(2 * a @ b + c, 0), rtol=1e-5
    )


def test_batch_keeps_order_and_dependencies(session: UmdSession) -> None:
    x = rng.standard_normal((4, 6)).astype(np.float32)
    X = _put(session, x)
    Y1, Y2, Y3 = _out(session, (4, 6)), _out(session, (4, 6)), _out(session, (6, 4))
    ops = [
        OpRequest.make(OpKind.RELU, [X], [Y1]),  # y1 = relu(x)
        OpRequest.make(OpKind.MUL, [Y1, X], [Y2]),  # y2 = y1 * x   (reads op 0's output)
        OpRequest.make(OpKind.TRANSPOSE, [Y2], [Y3]),  # y3 = y2.T  (reads op 1's output)
    ]
    done = session.translate_batch(ops)
    assert [t.kernel_id.name for t in done] == ["RELU", "MUL", "TRANSPOSE"]
    st = session.create_stream()
    session.wait(session.submit(st, done), 10)
    np.testing.assert_allclose(session.read(Y3.addr, (6, 4), F), (np.maximum(x, 0) * x).T)


def test_cross_stream_wait_orders_work(session: UmdSession) -> None:
    x = rng.standard_normal((8,)).astype(np.float32)
    X, Y, Z = _put(session, x), _out(session, (8,)), _out(session, (8,))
    s0, s1 = session.create_stream(), session.create_stream()
    t0 = session.submit(s0, [session.translate(OpRequest.make(OpKind.ADD, [X, X], [Y]))])
    t1 = session.submit(s1, [session.translate(OpRequest.make(OpKind.MUL, [Y, Y], [Z]))], wait=[t0])
    session.wait(t1, 10)
    np.testing.assert_allclose(session.read(Z.addr, (8,), F), (2 * x) ** 2)


def _conv_ref(x_nhwc: np.ndarray, w: np.ndarray) -> np.ndarray:
    """A 3x3, pad-1 convolution of an NHWC ``x``, NCHW out (the loops of the definition)."""
    xp = np.pad(x_nhwc.transpose(0, 3, 1, 2), ((0, 0), (0, 0), (1, 1), (1, 1)))
    ref = np.empty((1, w.shape[0], 6, 6), np.float32)
    for i in range(6):
        for j in range(6):
            ref[0, :, i, j] = np.tensordot(w, xp[0, :, i : i + 3, j : j + 3], axes=3)
    return ref


def test_nhwc_conv_runs_in_nhwc_without_scratch(umd: Umd) -> None:
    s = umd.create_session()
    x = rng.standard_normal((1, 6, 6, 3)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    X = TensorDesc(s.alloc(x.nbytes), x.shape, F, Layout.NHWC)
    s.write(X.addr, x)
    W = _put(s, w)
    Y = _out(s, (1, 6, 6, 4), Layout.NHWC)
    t = s.translate(OpRequest.make(OpKind.CONV2D, [X, W], [Y], pads=(1, 1, 1, 1)))
    assert t.scratch == () and len(t.blobs) == 1
    s.wait(s.submit(s.create_stream(), [t]), 10)
    np.testing.assert_allclose(
        s.read(Y.addr, Y.shape, F), _conv_ref(x, w).transpose(0, 2, 3, 1), rtol=1e-4, atol=1e-5
    )


def test_nhwc_conv_into_nchw_output_converts_and_scratch_is_reclaimed(umd: Umd) -> None:
    s = umd.create_session()
    x = rng.standard_normal((1, 6, 6, 3)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    X = TensorDesc(s.alloc(x.nbytes), x.shape, F, Layout.NHWC)
    s.write(X.addr, x)
    W = _put(s, w)
    Y = _out(s, (1, 4, 6, 6), Layout.NCHW)
    before = umd.device.stats().allocations
    t = s.translate(OpRequest.make(OpKind.CONV2D, [X, W], [Y], pads=(1, 1, 1, 1)))
    assert len(t.scratch) == 1 and umd.device.stats().allocations == before + 1
    st = s.create_stream()
    s.wait(s.submit(st, [t]), 10)
    assert umd.device.stats().allocations == before  # scratch freed once its ticket completed
    np.testing.assert_allclose(s.read(Y.addr, Y.shape, F), _conv_ref(x, w), rtol=1e-4, atol=1e-5)
    with pytest.raises(Exception, match="already submitted"):
        s.submit(st, [t])


def test_fault_surfaces_in_wait_and_reset_recovers(session: UmdSession, umd: Umd) -> None:
    x = np.ones(4, np.float32)
    X, Y = _put(session, x), _out(session, (4,))
    st = session.create_stream()
    t = session.translate(OpRequest.make(OpKind.RELU, [X], [Y]))
    umd.device.inject_fault(session.ctx, session.queue_of(st), FaultKind.ECC)
    with pytest.raises(DeviceFaultError) as info:
        session.wait(session.submit(st, [t]), 10)
    assert info.value.details["fault_kind"] == "ECC"
    session.reset_stream(st)
    session.wait(session.submit(st, [t]), 10)
    np.testing.assert_allclose(session.read(Y.addr, (4,), F), x)


def test_close_frees_everything_on_the_kmd(umd: Umd) -> None:
    s = umd.create_session()
    X = _put(s, np.ones((16, 16), np.float32))
    s.create_stream()
    assert umd.device.stats().allocations == 1
    s.close()
    st = umd.device.stats()
    assert (st.contexts, st.allocations, st.allocated_bytes, st.queues) == (0, 0, 0, 0)
    with pytest.raises(ClosedError):
        s.alloc(16)
    del X


def test_keepalive_expiry_reclaims_the_session(umd: Umd) -> None:
    s = umd.create_session(keepalive_timeout_s=0.3)
    kept = umd.create_session(keepalive_timeout_s=2.0)
    _put(s, np.ones(1024, np.float32))
    _put(kept, np.ones(8, np.float32))
    assert umd.device.stats().allocations == 2
    deadline = time.monotonic() + 60
    while umd.device.stats().allocations > 1 and time.monotonic() < deadline:
        kept.touch()  # KeepAlive
        time.sleep(0.05)
    st = umd.device.stats()
    assert st.allocations == 1 and st.allocated_bytes == 32 and st.contexts == 1
    with pytest.raises(SessionNotFoundError):
        umd.sessions.get(s.key)
    assert umd.sessions.get(kept.key) is kept
    assert umd.sessions.expired_count == 1


@pytest.mark.gpu
def test_the_same_blobs_run_on_the_cupy_backend() -> None:
    with Umd("cupy") as gpu:
        s = gpu.create_session()
        x = rng.standard_normal((2, 3, 8, 8)).astype(np.float32)
        w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
        X, W, Y = _put(s, x), _put(s, w), _out(s, (2, 4, 6, 6))
        st = s.create_stream()
        t = s.translate(OpRequest.make(OpKind.CONV2D, [X, W], [Y], relu=1))
        s.wait(s.submit(st, [t]), 30)
        with Umd("numpy") as cpu:
            c = cpu.create_session()
            Xc, Wc, Yc = _put(c, x), _put(c, w), _out(c, (2, 4, 6, 6))
            tc = c.translate(OpRequest.make(OpKind.CONV2D, [Xc, Wc], [Yc], relu=1))
            c.wait(c.submit(c.create_stream(), [tc]), 30)
            np.testing.assert_allclose(
                s.read(Y.addr, Y.shape, F), c.read(Yc.addr, Yc.shape, F), rtol=1e-4, atol=1e-5
            )


def test_a_session_closed_by_its_owner_leaves_the_registry() -> None:
    """Closing sessions one by one never exhausts the session limit (no registry leak)."""
    with Umd(max_sessions=2) as small:
        for _ in range(5):
            small.create_session().close()
        assert small.sessions.live() == []
