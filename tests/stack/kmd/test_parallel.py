"""Intra-op parallelism: ranges cover the grid exactly once, errors come back, small work stays
on one thread, a split convolution equals the whole one, and the device takes its count from
$REFSTACK_THREADS."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from stack.kmd import KmdDevice
from stack.kmd.kernels import conv_np, parallel
from stack.kmd.kernels.parallel import MIN_WORK, WorkerPool


@pytest.fixture
def pool3():  # type: ignore[no-untyped-def]
    pool = WorkerPool(3)
    previous = parallel.bind(pool)
    yield pool
    parallel.bind(previous)
    pool.close()


def test_split_covers_the_extent_once_in_contiguous_ranges(pool3: WorkerPool) -> None:
    seen: list[tuple[int, int, str]] = []
    lock = threading.Lock()

    def part(lo: int, hi: int) -> None:
        with lock:
            seen.append((lo, hi, threading.current_thread().name))

    parallel.split(10, MIN_WORK, part)
    assert sorted((lo, hi) for lo, hi, _ in seen) == [(0, 3), (3, 6), (6, 10)]
    assert pool3.splits == 1
    assert sum(name == threading.current_thread().name for *_, name in seen) == 1


def test_small_work_and_unbound_threads_run_whole(pool3: WorkerPool) -> None:
    calls: list[tuple[int, int]] = []
    parallel.split(10, MIN_WORK - 1, lambda lo, hi: calls.append((lo, hi)))
    assert calls == [(0, 10)] and pool3.splits == 0
    previous = parallel.bind(None)
    try:
        parallel.split(10, MIN_WORK, lambda lo, hi: calls.append((lo, hi)))
    finally:
        parallel.bind(previous)
    assert calls == [(0, 10), (0, 10)] and pool3.splits == 0


def test_a_failing_range_raises_after_every_range_finished(pool3: WorkerPool) -> None:
    done: list[int] = []

    def part(lo: int, hi: int) -> None:
        if lo == 3:
            raise RuntimeError("range 3 failed")
        done.append(lo)

    with pytest.raises(RuntimeError, match="range 3 failed"):
        parallel.split(9, MIN_WORK, part)
    assert sorted(done) == [0, 6]


@pytest.mark.parametrize(
    ("cin", "k", "stride", "pad", "method"),
    [
        (64, 1, 1, 0, conv_np.Method.POINTWISE),
        (32, 3, 1, 1, conv_np.Method.WIDE),
        (32, 3, 2, 1, conv_np.Method.GATHER),
    ],
)
def test_a_split_convolution_equals_the_whole_one(
    pool3: WorkerPool, cin: int, k: int, stride: int, pad: int, method: conv_np.Method
) -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, cin, 28, 28)).astype(np.float32)
    w = rng.standard_normal((96, cin, k, k)).astype(np.float32)
    b = rng.standard_normal(96).astype(np.float32)
    side = (28 + 2 * pad - k) // stride + 1
    ints = (stride, stride, pad, pad, pad, pad, 1, 1, 1, 1)
    assert conv_np.build_plan(x.shape, w.shape, (1, 96, side, side), ints).method is method
    split = np.empty((1, 96, side, side), np.float32)
    conv_np.conv2d([x, w, b], [split], ints, ())
    assert pool3.splits == 1  # the product; the copies are below MIN_WORK here
    previous = parallel.bind(None)
    try:
        whole = np.empty_like(split)
        conv_np.conv2d([x, w, b], [whole], ints, ())
    finally:
        parallel.bind(previous)
    np.testing.assert_allclose(split, whole, rtol=1e-5, atol=1e-4)  # values ~ 17: BLAS blocking


def test_device_threads_come_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(parallel.ENV, "2")
    with KmdDevice("numpy") as dev:
        assert dev.threads == 2
    monkeypatch.setenv(parallel.ENV, "not a number")
    with KmdDevice("numpy") as dev:
        assert dev.threads == parallel.DEFAULT
    with KmdDevice("numpy", threads=3) as dev:
        assert dev.threads == 3


def test_zero_threads_is_refused() -> None:
    from stack.kmd.errors import InvalidArgumentError

    with pytest.raises(InvalidArgumentError) as info:
        KmdDevice("numpy", threads=0)
    assert info.value.field == "threads"


@pytest.mark.parametrize("threads", [1, 3])
def test_the_residual_epilogue_adds_before_the_relu(threads: int) -> None:
    """Y = relu(conv + B + R) on every method, split over output channels or whole."""
    rng = np.random.default_rng(5)
    pool = WorkerPool(threads)
    previous = parallel.bind(pool)
    try:
        for k, stride, pad in ((1, 1, 0), (3, 1, 1), (3, 2, 1)):
            x = rng.standard_normal((1, 32, 28, 28)).astype(np.float32)
            w = rng.standard_normal((64, 32, k, k)).astype(np.float32)
            b = rng.standard_normal(64).astype(np.float32)
            side = (28 + 2 * pad - k) // stride + 1
            r = rng.standard_normal((1, 64, side, side)).astype(np.float32)
            ints = (stride, stride, pad, pad, pad, pad, 1, 1, 1, 1)
            y = np.empty_like(r)
            conv_np.conv2d([x, w, b, r], [y], ints, ())
            plain = np.empty_like(r)
            conv_np.conv2d([x, w, b], [plain], (*ints[:9], 0), ())
            np.testing.assert_allclose(y, np.maximum(plain + r, 0), rtol=1e-5, atol=1e-4)
    finally:
        parallel.bind(previous)
        pool.close()
