"""CPU launch configurations: the tiles the UMD encodes for a kernel's grid axis, and the device
running exactly those tiles (what ``refstack tune`` varies)."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pytest

from stack.kmd import KmdDevice
from stack.kmd.blob import LaunchConfig, decode
from stack.kmd.dtypes import DType
from stack.kmd.kernels.ids import KernelId
from stack.umd import OpKind, OpRequest, TensorDesc, Umd, UmdSession
from stack.umd.launch_cpu import MIN_WORK, TILE_BYTES, WHOLE, launch_cpu, tiles_for
from stack.umd.plan import KernelCall, Operand

F = DType.F32


def _conv_call(c: int, m: int, side: int, group: int = 1, n: int = 1) -> KernelCall:
    params = (
        Operand(0, (n, c, side, side), F),
        Operand(1, (m, c // group, 3, 3), F),
        Operand(2, (n, m, side, side), F),
    )
    return KernelCall(KernelId.CONV2D, params, 2, {"group": group})


def test_small_work_is_one_tile_and_large_work_one_per_thread() -> None:
    assert tiles_for(64, MIN_WORK - 1, 1 << 10, threads=2) == 1
    assert tiles_for(64, MIN_WORK, 1 << 10, threads=2) == 2
    assert tiles_for(1, MIN_WORK, 1 << 10, threads=2) == 1
    assert tiles_for(64, MIN_WORK, 3 * TILE_BYTES, threads=1) == 3  # tiles kept under TILE_BYTES
    assert tiles_for(64, MIN_WORK, 3 * TILE_BYTES, threads=2) == 4  # a multiple of the workers


def test_a_conv_launch_tiles_its_output_channels() -> None:
    call = _conv_call(64, 64, 28)  # 28*28*64 * 64*9 multiply-adds
    assert launch_cpu(call, threads=2) == LaunchConfig((2, 1, 1), (32, 1, 1), 0)
    assert launch_cpu(call, threads=1) == LaunchConfig((1, 1, 1), (64, 1, 1), 0)
    assert launch_cpu(call, threads=2, tiles=5) == LaunchConfig((5, 1, 1), (13, 1, 1), 0)
    assert launch_cpu(call, threads=2, tiles=500).grid == (64, 1, 1)  # clamped to the extent


@pytest.mark.parametrize(("group", "n"), [(2, 1), (1, 2)])
def test_grouped_or_batched_convs_and_kernels_without_a_grid_axis_run_whole(
    group: int, n: int
) -> None:
    assert launch_cpu(_conv_call(64, 64, 28, group, n), threads=2) == WHOLE
    relu = KernelCall(KernelId.RELU, (Operand(0, (1 << 22,), F), Operand(1, (1 << 22,), F)), 1)
    assert launch_cpu(relu, threads=2) == WHOLE


@pytest.fixture
def umd2() -> Iterator[UmdSession]:
    device = KmdDevice("numpy", threads=2)
    umd = Umd(device=device)
    yield umd.create_session()
    umd.close()
    device.close()


def test_the_device_runs_the_tiles_the_umd_encoded(umd2: UmdSession) -> None:
    s = umd2
    rng = np.random.default_rng(1)
    x = rng.standard_normal((1, 64, 28, 28)).astype(np.float32)
    w = rng.standard_normal((64, 64, 3, 3)).astype(np.float32)
    descs = []
    for arr in (x, w):
        va = s.alloc(arr.nbytes)
        s.write(va, arr)
        descs.append(TensorDesc(va, arr.shape, F))
    y = TensorDesc(s.alloc(x.nbytes), x.shape, F)
    req = OpRequest.make(OpKind.CONV2D, descs, [y], pads=(1, 1, 1, 1))
    t = s.translate(req)
    assert decode(t.blob).launch.grid == (2, 1, 1)  # one tile per thread
    before = s.device.intra_op()
    s.wait(s.submit(s.create_stream(), [t]), 30)
    after = s.device.intra_op()
    # two tiles; two passes over both threads: the im2col copy and the tiled product
    assert (after[0] - before[0], after[1] - before[1]) == (2, 2)
    got = s.read(y.addr, x.shape, F)
    pad = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
    want = np.zeros_like(got)
    for i in range(3):
        for j in range(3):
            want += np.einsum("mc,nchw->nmhw", w[:, :, i, j], pad[:, :, i : i + 28, j : j + 28])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)
