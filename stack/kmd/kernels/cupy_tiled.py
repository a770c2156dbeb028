"""The tiled GPU GEMM and CONV2D (float32): hand kernels whose tile is the launch's block.

See :mod:`stack.kmd.kernels.gpu_tiles` for what the launch configuration means. The kernels are
in ``cuda/tiled_gemm.cu`` (compiled once per process); the block size is read at run time from
the launch, so one compiled kernel serves every tuned size. :data:`launched` counts the tiled
launches per (kernel, block edge), so a test can assert that the block the UMD encoded is the
one that ran.
"""

from __future__ import annotations

import functools
import threading
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np

from stack.kmd.blob import LaunchConfig
from stack.kmd.kernels.gpu_tiles import tiled_launch
from stack.kmd.kernels.ids import KernelId

SOURCE = Path(__file__).with_name("cuda") / "tiled_gemm.cu"
launched: Counter[tuple[str, int]] = Counter()
_lock = threading.Lock()


@functools.cache
def _function(cp: Any, name: str) -> Any:
    return cp.RawModule(code=SOURCE.read_text()).get_function(name)


def _check(
    kernel_id: KernelId, launch: LaunchConfig, out_shape: tuple[int, ...], group: int
) -> int:
    """The block edge of ``launch``; ValueError unless it is exactly the tiled launch that
    block implies for this output (a kernel never runs a geometry it was not given)."""
    block = launch.block[0]
    want = tiled_launch(kernel_id, out_shape, block, group)
    if launch.block != want.block or launch.grid != want.grid:
        raise ValueError(
            f"{kernel_id.name} tiled launch: block {launch.block} grid {launch.grid}, "
            f"but output {out_shape} needs grid {want.grid} for block {want.block}"
        )
    if launch.shared_mem < want.shared_mem:
        raise ValueError(
            f"{kernel_id.name} tiled launch: shared_mem {launch.shared_mem} < {want.shared_mem}"
        )
    with _lock:
        launched[(kernel_id.name, block)] += 1
    return block


def _elements(a: Any) -> tuple[int, int]:
    return a.strides[0] // a.itemsize, a.strides[1] // a.itemsize


def gemm_tiled(
    cp: Any, a: Any, b: Any, y: Any, trans_a: int, trans_b: int, launch: LaunchConfig
) -> None:
    """Y = op(A) @ op(B) by the tiled kernel with the launch's block (float32, 2-D)."""
    _check(KernelId.GEMM, launch, tuple(y.shape), 1)
    sa_r, sa_k = _elements(a)
    sb_k, sb_c = _elements(b)
    if trans_a:
        sa_r, sa_k = sa_k, sa_r
    if trans_b:
        sb_k, sb_c = sb_c, sb_k
    rows, cols = y.shape
    inner = a.shape[0] if trans_a else a.shape[1]
    i32, i64 = np.int32, np.int64
    args = (a, b, y, i32(rows), i32(cols), i32(inner), i64(sa_r), i64(sa_k), i64(sb_k), i64(sb_c))
    _function(cp, "refstack_gemm_tiled_f32")(
        launch.grid, launch.block, args, shared_mem=launch.shared_mem
    )


def conv2d_tiled(
    cp: Any, ins: list[Any], y: Any, ints: tuple[int, ...], launch: LaunchConfig
) -> None:
    """Y = act(conv(X, W) + B + R) by the implicit-GEMM tiled kernel (float32, NCHW, no fused
    pool: the caller routes those to the library path)."""
    sh, sw, pt, pl, _pb, _pr, dh, dw, group, relu = ints[:10]
    x, w = ins[0], ins[1]
    n, c, h, wd = x.shape
    m, cg, kh, kw = w.shape
    oh, ow = y.shape[2], y.shape[3]
    if c != cg * group or m % group or y.shape[:2] != (n, m):
        raise ValueError(f"conv shapes X{x.shape} W{w.shape} Y{y.shape} group {group} disagree")
    _check(KernelId.CONV2D, launch, tuple(y.shape), group)
    bias = ins[2] if len(ins) > 2 else x  # x stands in for an absent operand (never read)
    res = ins[3] if len(ins) > 3 else x
    dims = (c, h, wd, m, cg, kh, kw, oh, ow, group, sh, sw, pt, pl, dh, dw)
    flags = (len(ins) > 2, len(ins) > 3, relu)
    args = (x, w, bias, res, y, *(np.int32(v) for v in (*dims, *flags)))
    _function(cp, "refstack_conv2d_tiled_f32")(
        launch.grid, launch.block, args, shared_mem=launch.shared_mem
    )
