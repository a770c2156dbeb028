"""The tiled GPU GEMM / CONV2D kernels' CUDA source, run on the host against NumPy.

``cuda_host/host_launch.cpp`` compiles ``stack/kmd/kernels/cuda/tiled_gemm.cu`` with g++ and
runs each launch with CUDA's block semantics (one host thread per CUDA thread, a barrier for
``__syncthreads``, one shared-memory buffer per block). :class:`HostArrays` offers the one call
:mod:`stack.kmd.kernels.cupy_tiled` makes of CuPy (``RawModule(code=...).get_function(name)``),
so the launches are built exactly as on a GPU: arguments, strides, grid from the block.
The GPU-marked tests in ``test_tiled_kernels_gpu.py`` run the same cases on CuPy.
"""

from __future__ import annotations

import ctypes
import functools
import subprocess
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from stack.kmd.blob import LaunchConfig
from stack.kmd.kernels import conv, cupy_tiled
from stack.kmd.kernels.gpu_tiles import tiled_launch
from stack.kmd.kernels.ids import KernelId
from tests.provisioning import provisioned_tool

HARNESS = Path(__file__).with_name("cuda_host") / "host_launch.cpp"
GXX, pytestmark = provisioned_tool("g++", installs="apt-get install g++, C++20")


@functools.cache
def _library(folder: str) -> ctypes.CDLL:
    out = Path(folder) / "libtiled_host.so"
    subprocess.run(
        [str(GXX), "-std=c++20", "-O1", "-pthread", "-shared", "-fPIC",
         f'-DKERNEL_SOURCE="{cupy_tiled.SOURCE}"', str(HARNESS), "-o", str(out)],
        check=True, capture_output=True, timeout=300,
    )  # fmt: skip
    return ctypes.CDLL(str(out))


def _arg(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return ctypes.c_void_p(value.ctypes.data)
    if isinstance(value, np.int64):
        return ctypes.c_longlong(int(value))
    assert isinstance(value, np.int32), type(value)
    return ctypes.c_int(int(value))


class HostArrays:
    """The part of CuPy the tiled kernels use: a RawModule whose functions run on the host."""

    def __init__(self, lib: ctypes.CDLL) -> None:
        self.lib = lib
        self.launches: list[tuple[tuple[int, ...], tuple[int, ...], int]] = []

    def RawModule(self, code: str) -> HostArrays:  # CuPy's name
        assert code == cupy_tiled.SOURCE.read_text()
        return self

    def get_function(self, name: str) -> Any:
        fn = getattr(self.lib, f"host_{name}")

        def launch(
            grid: tuple[int, ...], block: tuple[int, ...], args: tuple, shared_mem: int = 0
        ) -> None:
            assert block[2] == 1 and shared_mem >= 2 * block[0] * block[1] * 4
            self.launches.append((tuple(grid), tuple(block), shared_mem))
            dims = [ctypes.c_uint(v) for v in (*grid, block[0], block[1])]
            fn(*dims, *(_arg(a) for a in args))

        return launch


@pytest.fixture(scope="module")
def host(tmp_path_factory: pytest.TempPathFactory) -> HostArrays:
    return HostArrays(_library(str(tmp_path_factory.mktemp("tiled"))))


@pytest.mark.parametrize("block", [4, 8, 16])
@pytest.mark.parametrize(("trans_a", "trans_b"), [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_tiled_gemm_matches_numpy(host: HostArrays, block: int, trans_a: int, trans_b: int) -> None:
    rng = np.random.default_rng(block + 2 * trans_a + trans_b)
    rows, inner, cols = 37, 53, 29
    a = rng.standard_normal((inner, rows) if trans_a else (rows, inner), dtype=np.float32)
    b = rng.standard_normal((cols, inner) if trans_b else (inner, cols), dtype=np.float32)
    y = np.full((rows, cols), np.nan, dtype=np.float32)
    launch = tiled_launch(KernelId.GEMM, y.shape, block)
    before = cupy_tiled.launched[("GEMM", block)]
    host.launches.clear()
    cupy_tiled.gemm_tiled(host, a, b, y, trans_a, trans_b, launch)
    want = (a.T if trans_a else a) @ (b.T if trans_b else b)
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-4)
    edge = -(-cols // block), -(-rows // block)
    assert host.launches == [((*edge, 1), (block, block, 1), 2 * block * block * 4)]
    assert cupy_tiled.launched[("GEMM", block)] == before + 1


CONV_CASES = {
    "plain 3x3 pad 1": ((2, 3, 9, 8), (5, 3, 3, 3), (1, 1, 1, 1, 1, 1, 1, 1, 1, 0), False, False),
    "stride, dilation, groups": (
        (2, 6, 11, 9), (8, 3, 3, 2), (2, 1, 1, 0, 1, 1, 1, 2, 2, 0), True, False),
    "bias, residual, relu": (
        (1, 4, 7, 7), (6, 4, 1, 1), (1, 1, 0, 0, 0, 0, 1, 1, 1, 1), True, True),
    "depthwise": ((1, 4, 6, 6), (4, 1, 3, 3), (1, 1, 1, 1, 1, 1, 1, 1, 4, 1), True, False),
}  # fmt: skip


@pytest.mark.parametrize("block", [4, 8])
@pytest.mark.parametrize("case", sorted(CONV_CASES))
def test_tiled_conv_matches_the_numpy_kernel(host: HostArrays, block: int, case: str) -> None:
    x_shape, w_shape, ints, has_bias, has_res = CONV_CASES[case]
    rng = np.random.default_rng(len(case) + block)
    x = rng.standard_normal(x_shape, dtype=np.float32)
    w = rng.standard_normal(w_shape, dtype=np.float32)
    oh, ow = conv.conv_hw(x_shape, w_shape, ints)
    out = (x_shape[0], w_shape[0], oh, ow)
    ins = [x, w]
    if has_bias or has_res:
        ins.append(rng.standard_normal((w_shape[0],), dtype=np.float32))
    if has_res:
        ins.append(rng.standard_normal(out, dtype=np.float32))
    want = np.empty(out, np.float32)
    conv.conv2d(np, ins, [want], ints, ())
    got = np.full(out, np.nan, np.float32)
    launch = tiled_launch(KernelId.CONV2D, out, block, group=ints[8])
    cupy_tiled.conv2d_tiled(host, ins, got, ints, launch)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
    assert launch.grid[2] == x_shape[0] * ints[8]


def test_a_launch_whose_grid_is_not_its_blocks_is_refused(host: HostArrays) -> None:
    a = np.ones((20, 20), np.float32)
    y = np.zeros((20, 20), np.float32)
    bad = LaunchConfig((1, 1, 1), (8, 8, 1), 512)
    with pytest.raises(ValueError, match=r"needs grid \(3, 3, 1\) for block \(8, 8, 1\)"):
        cupy_tiled.gemm_tiled(host, a, a, y, 0, 0, bad)
    short = LaunchConfig((3, 3, 1), (8, 8, 1), 100)
    with pytest.raises(ValueError, match="shared_mem 100 < 512"):
        cupy_tiled.gemm_tiled(host, a, a, y, 0, 0, short)
    assert not y.any()
