"""Prepared launches: a command buffer's untiled launches become one closure at record time,
computing bit for bit what the kernel computes; tiled launches, submits and paths a preparer
does not cover call the kernel as before."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from stack.kmd import KernelId, KmdDevice
from stack.kmd import blob as B
from stack.kmd.kernels import numpy_backend, prepared_np, registry

from .conftest import Rig

RNG = np.random.default_rng(5)


def _f32(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def _far_row() -> np.ndarray:
    """Softmax rows, one of them far below the maximum (the underflow fallback)."""
    x = _f32(3, 8)
    x[1] -= 200.0
    return x


#: (kernel, inputs, output shape, ints, floats): each a path a preparer covers.
CASES: list[tuple[KernelId, list[np.ndarray], tuple[int, ...], tuple[int, ...], tuple[float, ...]]]
CASES = [
    (KernelId.GEMM, [_f32(5, 7), _f32(7, 3)], (5, 3), (0, 0, 0), (1.0, 1.0)),
    (KernelId.GEMM, [_f32(5, 7), _f32(7, 3), _f32(3)], (5, 3), (0, 0, 1), (1.0, 1.0)),
    (KernelId.GEMM, [_f32(7, 5), _f32(3, 7), _f32(5, 3)], (5, 3), (1, 1, 0), (1.0, 1.0)),
    (KernelId.GEMM, [_f32(5, 7), _f32(7, 3)], (5, 3), (0, 0, 1), (1.0, 1.0)),
    (KernelId.MATMUL, [_f32(2, 4, 6), _f32(2, 6, 5)], (2, 4, 5), (), ()),
    (KernelId.LAYERNORM, [_f32(2, 6, 16), _f32(16), _f32(16)], (2, 6, 16), (2,), (1e-5,)),
    (KernelId.LAYERNORM, [_f32(4, 8), _f32(8)], (4, 8), (-1,), (1e-3,)),
    (KernelId.SOFTMAX, [_f32(2, 3, 9)], (2, 3, 9), (-1, 0), ()),
    (KernelId.SOFTMAX, [_far_row()], (3, 8), (1, 0), ()),
    (KernelId.TRANSPOSE, [_f32(2, 3, 4, 5)], (2, 4, 5, 3), (0, 2, 3, 1), ()),
    (KernelId.TRANSPOSE, [_f32(3, 4)], (4, 3), (), ()),
    (KernelId.ADD, [_f32(4, 6), _f32(6)], (4, 6), (0,), ()),
    (KernelId.ADD, [_f32(4, 6), _f32(4, 6)], (4, 6), (1,), ()),
    (KernelId.MUL, [_f32(4, 6), np.array(0.25, np.float32)], (4, 6), (), ()),
    (KernelId.RELU, [_f32(64, 128)], (64, 128), (), ()),
    (KernelId.GLOBALAVGPOOL, [_f32(1, 64, 4, 4)], (1, 64, 1, 1), (), ()),
    (KernelId.GLOBALAVGPOOL, [_f32(2, 3, 5, 7)], (2, 3, 1, 1), (), ()),
]


def _kernel(kid: KernelId) -> Any:
    registry.known_backends()  # loads the built-in backends
    return registry.kernel(numpy_backend.NAME, kid)


@pytest.mark.parametrize(("kid", "inputs", "shape", "ints", "floats"), CASES)
def test_a_prepared_launch_computes_exactly_what_the_kernel_computes(
    kid: KernelId,
    inputs: list[np.ndarray],
    shape: tuple[int, ...],
    ints: tuple[int, ...],
    floats: tuple[float, ...],
) -> None:
    fn = _kernel(kid)
    want = np.empty(shape, np.float32)
    fn([a.copy() for a in inputs], [want], ints, floats)
    ins = [a.copy() for a in inputs]
    got = np.full(shape, np.nan, np.float32)
    prepare = registry.preparer(fn)
    assert prepare is not None
    run = prepare(ins, [got], ints, floats)
    assert run is not None
    for _ in range(2):  # replayed: the same result each time
        run()
        np.testing.assert_array_equal(got, want)
    ins[0][...] = 1.0  # a new input in the same memory is read by the next execution
    fn(ins, [want], ints, floats)
    run()
    np.testing.assert_array_equal(got, want)


def test_paths_a_preparer_does_not_cover_are_left_to_the_kernel() -> None:
    a, b, y = _f32(5, 7), _f32(7, 3), np.empty((5, 3), np.float32)
    assert prepared_np.gemm([a, b], [y], (0, 0, 0), (2.0, 1.0)) is None  # alpha
    assert prepared_np.gemm([a, b, _f32(3)], [y], (0, 0, 0), (1.0, 0.5)) is None  # beta
    assert prepared_np.gemm([a.astype(np.float64), b], [y], (0, 0, 0), (1.0, 1.0)) is None
    x = _f32(4, 8)
    assert prepared_np.softmax([x], [np.empty_like(x)], (0, 0), ()) is None  # inner axis
    assert prepared_np.softmax([x], [np.empty_like(x)], (-1, 1), ()) is None  # log form
    strided = _f32(4, 16)[:, ::2]
    assert prepared_np.layernorm([strided, _f32(8)], [np.empty_like(x)], (-1,), (1e-5,)) is None
    assert prepared_np.matmul([_f32(7), _f32(7, 3)], [np.empty(3, np.float32)], (), ()) is None
    pooled = _f32(1, 4, 6, 6)
    assert prepared_np.globalavgpool([pooled[:, :, ::2]], [_f32(1, 4, 1, 1)], (), ()) is None
    assert (
        prepared_np.globalavgpool([pooled.astype(np.float16)], [_f32(1, 4, 1, 1)], (), ()) is None
    )
    assert registry.preparer(lambda *args: None) is None  # a function nobody registered


def _gemm_blob(rig: Rig, a: B.TensorParam, b: B.TensorParam, y: B.TensorParam, tiles: int) -> bytes:
    launch = B.LaunchConfig((tiles, 1, 1), (1, 1, 1), 0)
    return B.encode(B.InstructionBlob(KernelId.GEMM, (a, b, y), launch, (0, 0, 1)))


@pytest.mark.parametrize(("tiles", "prepared"), [(1, True), (2, False)])
def test_a_command_buffer_prepares_its_untiled_launches_and_counts_them_as_tiles(
    tiles: int, prepared: bool
) -> None:
    a, b = _f32(10, 16), _f32(16, 8)
    with KmdDevice("numpy", threads=2) as dev:
        rig = Rig(dev)
        pa, pb, py = rig.put(a), rig.put(b), rig.empty((10, 8))
        buf = dev.create_cmdbuf(rig.ctx, [_gemm_blob(rig, pa, pb, py, tiles)])
        launches = dev._driver._cmdbufs[buf].launches  # type: ignore[union-attr]
        assert [launch.prepared for launch in launches] == [prepared]
        before = dev.intra_op()[0]
        rig.value += 1
        dev.execute_cmdbuf(rig.ctx, rig.queue, buf, signal=(rig.fence, rig.value))
        dev.wait_fence(rig.ctx, rig.fence, rig.value, timeout_s=30)
        assert dev.intra_op()[0] - before == tiles
        out = dev.read_array(rig.ctx, py.addr, py.shape, py.dtype)
    np.testing.assert_allclose(out, np.maximum(a @ b, 0), rtol=1e-5, atol=1e-5)


def test_a_submit_is_not_prepared(dev: KmdDevice) -> None:
    rig = Rig(dev)
    pa, pb, py = rig.put(_f32(4, 4)), rig.put(_f32(4, 4)), rig.empty((4, 4))
    touched: dict[int, Any] = {}
    planner = dev._driver.planner  # type: ignore[union-attr]
    blob = _gemm_blob(rig, pa, pb, py, 1)
    assert not planner.bind(blob, rig.ctx, dev._driver.space, touched).prepared  # type: ignore[union-attr]
    assert planner.bind(blob, rig.ctx, dev._driver.space, touched, prepare=True).prepared  # type: ignore[union-attr]


def test_a_rebound_buffer_prepares_its_launches_against_the_new_allocation(rig: Rig) -> None:
    x1, x2 = rig.put(np.full(4, -1.0, np.float32)), rig.put(np.full(4, 2.0, np.float32))
    y = rig.empty((4,))
    buf = rig.dev.create_cmdbuf(rig.ctx, [rig.blob(KernelId.RELU, [x1, y])])
    rig.value += 1
    rig.dev.execute_cmdbuf(
        rig.ctx, rig.queue, buf, signal=(rig.fence, rig.value), rebind=[(x1.addr, x2.addr)]
    )
    rig.dev.wait_fence(rig.ctx, rig.fence, rig.value, timeout_s=30)
    launches = rig.dev._driver._cmdbufs[buf].launches  # type: ignore[union-attr]
    assert [launch.prepared for launch in launches] == [True]
    got = rig.dev.read_array(rig.ctx, y.addr, y.shape, y.dtype)
    np.testing.assert_array_equal(got, np.full(4, 2.0))


def test_a_relu_on_a_contiguous_output_reads_a_zero_row() -> None:
    for size in (10, 1024, 2048, 4096, 4 * 7 * 7):
        x = _f32(size)
        x[::3] = -0.0
        want = np.maximum(x, 0)
        out = np.empty_like(x)
        prepared_np.relu_rows(x, out)()
        np.testing.assert_array_equal(out, want)
        assert not np.signbit(out).any()
    ints = np.arange(-3, 5)
    out = np.empty(8, np.float32)
    prepared_np.relu_rows(ints, out)()  # another dtype: the kernel's relu_
    np.testing.assert_array_equal(out, np.maximum(ints, 0))
