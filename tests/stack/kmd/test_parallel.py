"""Intra-op parallelism: a launch's grid tiles cover its grid axis once, shared out over the
workers; helper passes split per worker; errors come back; results do not depend on tiles or
threads; the device honours the grid[0] a blob encodes and takes its count from
$REFSTACK_THREADS."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator

import numpy as np
import pytest

from stack.kmd import KernelId, KmdDevice
from stack.kmd import blob as B
from stack.kmd.kernels import conv_np, parallel
from stack.kmd.kernels.parallel import WorkerPool

from .conftest import Rig


@pytest.fixture
def pool3() -> Iterator[WorkerPool]:
    pool = WorkerPool(3)
    previous = parallel.bind(pool)
    yield pool
    parallel.bind(previous)
    parallel.bind_tiles(1)
    pool.close()


def _record(seen: list[tuple[int, int, str]]):  # type: ignore[no-untyped-def]
    lock = threading.Lock()

    def part(lo: int, hi: int) -> None:
        with lock:
            seen.append((lo, hi, threading.current_thread().name))

    return part


def test_grid_tiles_cover_the_extent_once_shared_over_the_workers(pool3: WorkerPool) -> None:
    seen: list[tuple[int, int, str]] = []
    parallel.bind_tiles(6)
    parallel.grid(12, _record(seen))
    assert sorted((lo, hi) for lo, hi, _ in seen) == [(i, i + 2) for i in range(0, 12, 2)]
    assert (pool3.tiles, pool3.splits) == (6, 1)
    me = threading.current_thread().name
    # the first run of tiles on the executing thread, the other two runs on pool threads
    assert sorted(lo for lo, _, name in seen if name == me) == [0, 2]


def test_one_tile_runs_whole_on_the_executing_thread(pool3: WorkerPool) -> None:
    seen: list[tuple[int, int, str]] = []
    parallel.bind_tiles(1)
    parallel.grid(10, _record(seen))
    parallel.split(10, _record(seen))
    me = threading.current_thread().name
    assert seen == [(0, 10, me), (0, 10, me)] and pool3.splits == 0


def test_tiles_beyond_the_extent_are_clamped_and_one_thread_runs_them_in_order() -> None:
    seen: list[tuple[int, int, str]] = []
    pool = WorkerPool(1)
    previous = parallel.bind(pool)
    try:
        parallel.bind_tiles(9)
        parallel.grid(4, _record(seen))
    finally:
        parallel.bind(previous)
        parallel.bind_tiles(1)
    assert [(lo, hi) for lo, hi, _ in seen] == [(0, 1), (1, 2), (2, 3), (3, 4)]
    assert (pool.tiles, pool.splits) == (4, 0)


def test_helper_passes_split_once_per_worker(pool3: WorkerPool) -> None:
    seen: list[tuple[int, int, str]] = []
    parallel.bind_tiles(2)  # two workers of three threads
    parallel.split(9, _record(seen))
    assert sorted((lo, hi) for lo, hi, _ in seen) == [(0, 4), (4, 9)]


def test_a_failing_tile_raises_after_every_tile_finished(pool3: WorkerPool) -> None:
    done: list[int] = []

    def part(lo: int, hi: int) -> None:
        if lo == 3:
            raise RuntimeError("tile 3 failed")
        done.append(lo)

    parallel.bind_tiles(3)
    with pytest.raises(RuntimeError, match="tile 3 failed"):
        parallel.grid(9, part)
    assert sorted(done) == [0, 6]


def test_a_launch_finding_the_pool_threads_taken_runs_its_parts_on_its_own_thread() -> None:
    pool = WorkerPool(2)
    seen: list[tuple[str, str]] = []
    held, released = threading.Event(), threading.Event()

    def record(tag: str) -> Callable[[], None]:
        return lambda: seen.append((tag, threading.current_thread().name))

    def hold() -> None:  # the first launch's pool-thread part: keeps the pool until told
        seen.append(("a1", threading.current_thread().name))
        held.set()
        assert released.wait(30)

    first = threading.Thread(target=pool.run, args=([record("a0"), hold],), name="queue-a")
    first.start()
    try:
        assert held.wait(30)
        pool.run([record("b0"), record("b1")])  # meanwhile, on this thread
    finally:
        released.set()
        first.join(30)
        pool.close()
    me = threading.current_thread().name
    assert sorted(seen) == [("a0", "queue-a"), ("a1", "kmd-intra-0"), ("b0", me), ("b1", me)]
    assert pool.splits == 1


def test_a_closed_pool_refuses_parts_and_more_parts_than_threads_are_refused() -> None:
    pool = WorkerPool(2)
    with pytest.raises(ValueError, match="3 parts for 2 threads"):
        pool.run([lambda: None] * 3)
    pool.close()
    pool.close()  # twice is harmless
    with pytest.raises(RuntimeError, match="closed"):
        pool.run([lambda: None, lambda: None])


@pytest.mark.parametrize(
    ("cin", "k", "stride", "pad", "method"),
    [
        (64, 1, 1, 0, conv_np.Method.POINTWISE),
        (32, 3, 1, 1, conv_np.Method.WIDE),
        (32, 3, 2, 1, conv_np.Method.STRIDED),
        (32, 1, 2, 0, conv_np.Method.STRIDED),
    ],
)
@pytest.mark.parametrize("tiles", [2, 7])
def test_a_tiled_convolution_equals_the_whole_one(
    pool3: WorkerPool, cin: int, k: int, stride: int, pad: int, method: conv_np.Method, tiles: int
) -> None:
    rng = np.random.default_rng(3)
    x = rng.standard_normal((1, cin, 28, 28)).astype(np.float32)
    w = rng.standard_normal((96, cin, k, k)).astype(np.float32)
    b = rng.standard_normal(96).astype(np.float32)
    side = (28 + 2 * pad - k) // stride + 1
    ints = (stride, stride, pad, pad, pad, pad, 1, 1, 1, 1)
    assert conv_np.build_plan(x.shape, w.shape, (1, 96, side, side), ints).method is method
    tiled = np.empty((1, 96, side, side), np.float32)
    parallel.bind_tiles(tiles)
    conv_np.conv2d([x, w, b], [tiled], ints, ())
    assert pool3.tiles == tiles
    parallel.bind_tiles(1)
    whole = np.empty_like(tiled)
    conv_np.conv2d([x, w, b], [whole], ints, ())
    np.testing.assert_allclose(tiled, whole, rtol=1e-5, atol=1e-4)  # values ~ 17: BLAS blocking


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


@pytest.mark.parametrize(("grid", "tiles", "splits"), [(1, 1, 0), (2, 2, 1), (5, 5, 1), (0, 1, 0)])
def test_the_device_runs_the_tiles_its_blob_encodes(grid: int, tiles: int, splits: int) -> None:
    """A GEMM blob with launch grid (g, 1, 1) runs g tiles of Y's rows on a 2-thread device."""
    rng = np.random.default_rng(7)
    a = rng.standard_normal((10, 16)).astype(np.float32)
    b = rng.standard_normal((16, 8)).astype(np.float32)
    with KmdDevice("numpy", threads=2) as dev:
        rig = Rig(dev)
        pa, pb, py = rig.put(a), rig.put(b), rig.empty((10, 8))
        launch = B.LaunchConfig((grid, 1, 1), (1, 1, 1), 0)
        blob = B.encode(B.InstructionBlob(KernelId.GEMM, (pa, pb, py), launch, (0, 0, 1)))
        value = rig.submit([blob])
        dev.wait_fence(rig.ctx, rig.fence, value, timeout_s=30)
        out = dev.read_array(rig.ctx, py.addr, py.shape, py.dtype)
        assert dev.intra_op() == (tiles, splits)
    np.testing.assert_allclose(out, np.maximum(a @ b, 0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("threads", [1, 3])
def test_the_residual_epilogue_adds_before_the_relu(threads: int) -> None:
    """Y = relu(conv + B + R) on every method, in tiles over output channels or whole."""
    rng = np.random.default_rng(5)
    pool = WorkerPool(threads)
    previous = parallel.bind(pool)
    parallel.bind_tiles(threads * 2)
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
        parallel.bind_tiles(1)
        pool.close()


@pytest.mark.parametrize(
    ("k", "stride", "pad", "pool"),
    [(3, 1, 1, (2, 2, 2, 2, 0, 0, 0, 0)), (7, 2, 3, (3, 3, 2, 2, 1, 1, 1, 1)),
     (1, 1, 0, (3, 3, 2, 2, 0, 0, 1, 1))],
)  # fmt: skip
@pytest.mark.parametrize("tiles", [1, 3])
def test_a_fused_max_pool_equals_conv_then_pool(
    pool3: WorkerPool, k: int, stride: int, pad: int, pool: tuple[int, ...], tiles: int
) -> None:
    """CONV2D with pool_h > 0 = MAXPOOL(conv): tiled on NumPy, and in the generic kernel."""
    from stack.kmd.kernels import conv
    from stack.kmd.kernels import pool as pool_kernels

    rng = np.random.default_rng(11)
    x = rng.standard_normal((1, 8, 20, 20)).astype(np.float32)
    w = rng.standard_normal((12, 8, k, k)).astype(np.float32)
    b = rng.standard_normal(12).astype(np.float32)
    ints = (stride, stride, pad, pad, pad, pad, 1, 1, 1, 1)
    side = (20 + 2 * pad - k) // stride + 1
    full = np.empty((1, 12, side, side), np.float32)
    conv.conv2d(np, [x, w, b], [full], ints, ())
    pk, _, ps, _, pt, _, pb, _ = pool
    pside = (side + pt + pb - pk) // ps + 1
    want = np.empty((1, 12, pside, pside), np.float32)
    pool_kernels.maxpool(np, [full], [want], (*pool, 1, 1), ())
    parallel.bind_tiles(tiles)
    got = np.empty_like(want)
    conv_np.conv2d([x, w, b], [got], (*ints, *pool), ())
    assert pool3.tiles == tiles
    generic = np.empty_like(want)
    conv.conv2d(np, [x, w, b], [generic], (*ints, *pool), ())
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
    np.testing.assert_allclose(generic, want, rtol=1e-5, atol=1e-4)
