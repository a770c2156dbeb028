"""Hand-written GPU kernels of the CuPy backend, compiled once and cached.

Float32 fast paths (ElementwiseKernel / ReductionKernel / RawKernel from ``cuda/*.cu``); any
other dtype or layout falls back to the generic kernel bound to CuPy. GEMM and CONV2D read the
launch's block (:mod:`stack.kmd.kernels.gpu_tiles`): 0 runs the library path, T the tiled
hand kernel with T x T blocks (:mod:`stack.kmd.kernels.cupy_tiled`).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import numpy as np

from stack.kmd.kernels import (
    conv,
    cupy_tiled,
    current_launch,
    elementwise,
    linalg,
    norm,
    pool,
    quant,
)
from stack.kmd.kernels.gpu_tiles import LIBRARY
from stack.kmd.kernels.ids import KernelId

CUDA_DIR = Path(__file__).with_name("cuda")
BLOCK = 256


@functools.cache
def _module(cp: Any, name: str) -> Any:
    return cp.RawModule(code=(CUDA_DIR / f"{name}.cu").read_text())


@functools.cache
def _elementwise(cp: Any, name: str) -> Any:
    specs = {
        # ReLU keeps NaN (x < 0 is false for NaN), as numpy.maximum(x, 0) does
        "relu": ("T x", "T y", "y = x < (T)0 ? (T)0 : x"),
        "add_relu": ("T a, T b", "T y", "T v = a + b; y = v < (T)0 ? (T)0 : v"),
        "epilogue": (
            "T c, float32 alpha, float32 beta, int32 relu",
            "T y",
            "float v = alpha * (float)y + beta * (float)c; y = (T)((relu && v < 0.f) ? 0.f : v)",
        ),
        "quantize": (
            "float32 x, float32 scale, float32 zp, float32 lo, float32 hi",
            "Y y",
            "y = (Y)fminf(fmaxf(rintf(x / scale) + zp, lo), hi)",
        ),
    }
    ins, outs, body = specs[name]
    return cp.ElementwiseKernel(ins, outs, body, f"refstack_{name}")


@functools.cache
def _gap(cp: Any) -> Any:
    return cp.ReductionKernel(
        "T x",
        "T y",
        "x",
        "a + b",
        "y = a / (_in_ind.size() / _out_ind.size())",
        "0",
        "refstack_gap",
    )


def _f32(*arrays: Any) -> bool:
    return all(a.dtype == np.float32 and a.flags.c_contiguous for a in arrays)


def gemm(
    cp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """cuBLAS matmul (block 0) or the tiled kernel (block T) into Y, then one fused epilogue
    kernel (alpha, beta * C, ReLU)."""
    if outs[0].dtype != np.float32 or any(a.dtype != np.float32 for a in ins):
        return linalg.gemm(cp, ins, outs, ints, fl)
    trans_a, trans_b, relu = ints[0], ints[1], ints[2]
    y = outs[0]
    launch = current_launch.current()
    if launch.block[0] != LIBRARY and y.size:
        cupy_tiled.gemm_tiled(cp, ins[0], ins[1], y, trans_a, trans_b, launch)
    else:
        cp.matmul(ins[0].T if trans_a else ins[0], ins[1].T if trans_b else ins[1], out=y)
    has_c = len(ins) > 2 and fl[1] != 0.0
    if has_c or relu or fl[0] != 1.0:
        c = ins[2] if has_c else cp.zeros((), dtype=y.dtype)
        _elementwise(cp, "epilogue")(
            c, np.float32(fl[0]), np.float32(fl[1] if has_c else 0.0), np.int32(relu), y
        )


def conv2d(
    cp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """The tiled implicit-GEMM kernel when the launch's block is T (float32, no fused pool),
    else the library path (im2col + cuBLAS)."""
    launch = current_launch.current()
    if (
        launch.block[0] == LIBRARY
        or conv.algorithm(ints)
        or conv.pool_ints(ints) is not None
        or not _f32(*ins, *outs)
        or outs[0].size == 0
    ):
        return conv.conv2d(cp, ins, outs, ints, fl)
    cupy_tiled.conv2d_tiled(cp, ins, outs[0], ints, launch)
    return None


def relu(
    cp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """ElementwiseKernel ReLU (float32), else generic."""
    if not _f32(ins[0], outs[0]):
        return elementwise.relu(cp, ins, outs, ints, fl)
    _elementwise(cp, "relu")(ins[0], outs[0])
    return None


def add(
    cp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Fused Add+ReLU kernel when asked for ReLU, else cupy.add."""
    if ints[0] and ins[0].dtype == ins[1].dtype == outs[0].dtype == np.float32:
        _elementwise(cp, "add_relu")(ins[0], ins[1], outs[0])
    else:
        elementwise.add(cp, ins, outs, ints, fl)


def _rows(x: Any, axis: int) -> tuple[int, int]:
    cols = int(np.prod(x.shape[axis % x.ndim :]))
    return x.size // max(cols, 1), cols


def softmax(
    cp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Row softmax RawKernel over the last axis (float32), else generic."""
    x, y = ins[0], outs[0]
    log = len(ints) > 1 and ints[1]
    if log or x.ndim == 0 or ints[0] % x.ndim != x.ndim - 1 or not _f32(x, y) or x.size == 0:
        return norm.softmax(cp, ins, outs, ints, fl)
    rows, cols = _rows(x, -1)
    fn = _module(cp, "softmax").get_function("refstack_softmax_rows_f32")
    fn((rows,), (BLOCK,), (x, y, np.int32(rows), np.int32(cols)), shared_mem=BLOCK * 4)
    return None


def layernorm(
    cp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Row LayerNorm RawKernel (float32, full-size scale/bias), else generic."""
    x, y = ins[0], outs[0]
    if x.ndim == 0:
        return norm.layernorm(cp, ins, outs, ints, fl)
    rows, cols = _rows(x, ints[0])
    params = ins[1:]
    if not _f32(x, y, *params) or any(p.size != cols for p in params) or x.size == 0:
        return norm.layernorm(cp, ins, outs, ints, fl)
    bias = params[1] if len(params) > 1 else params[0]
    fn = _module(cp, "layernorm").get_function("refstack_layernorm_rows_f32")
    args = (
        x,
        params[0],
        bias,
        y,
        np.int32(rows),
        np.int32(cols),
        np.float32(fl[0]),
        np.int32(len(params) > 1),
    )
    fn((rows,), (BLOCK,), args, shared_mem=BLOCK * 4)
    return None


def _pool_args(x: Any, y: Any, ints: tuple[int, ...]) -> tuple[Any, ...]:
    n, c, h, w = x.shape
    oh, ow = y.shape[2], y.shape[3]
    total = n * c * oh * ow
    head = (x, y, np.int64(total), np.int32(h), np.int32(w), np.int32(oh), np.int32(ow))
    return ((total + BLOCK - 1) // BLOCK,), head + tuple(np.int32(v) for v in ints[:6])


def maxpool(
    cp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """One thread per output element (float32), else generic."""
    x, y = ins[0], outs[0]
    if not _f32(x, y) or x.ndim != 4 or y.size == 0:
        return pool.maxpool(cp, ins, outs, ints, fl)
    grid, args = _pool_args(x, y, ints)
    fn = _module(cp, "pool2d").get_function("refstack_maxpool2d_f32")
    fn(grid, (BLOCK,), (*args, np.int32(ints[8]), np.int32(ints[9])))
    return None


def avgpool(
    cp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """One thread per output element (float32, no dilation), else generic."""
    x, y = ins[0], outs[0]
    dilated = len(ints) >= 11 and (ints[9], ints[10]) != (1, 1)
    if not _f32(x, y) or x.ndim != 4 or y.size == 0 or dilated:
        return pool.avgpool(cp, ins, outs, ints, fl)
    grid, args = _pool_args(x, y, ints)
    fn = _module(cp, "pool2d").get_function("refstack_avgpool2d_f32")
    fn(grid, (BLOCK,), (*args, np.int32(ints[6]), np.int32(ints[7]), np.int32(ints[8])))
    return None


def globalavgpool(
    cp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """ReductionKernel mean over H, W (float32), else generic."""
    x, y = ins[0], outs[0]
    if not _f32(x, y) or x.ndim != 4:
        return pool.globalavgpool(cp, ins, outs, ints, fl)
    _gap(cp)(x, axis=(2, 3), out=y.reshape(x.shape[0], x.shape[1]))
    return None


def quantize(
    cp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """Per-tensor float32 quantize in one ElementwiseKernel, else generic."""
    x, y = ins[0], outs[0]
    if x.dtype != np.float32 or ins[1].size != 1 or (len(ins) > 2 and ins[2].size != 1):
        return quant.quantize(cp, ins, outs, ints, fl)
    info = np.iinfo(y.dtype)
    zp = ins[2].astype(cp.float32).reshape(()) if len(ins) > 2 else np.float32(0)
    scale = ins[1].astype(cp.float32).reshape(())
    _elementwise(cp, "quantize")(x, scale, zp, np.float32(info.min), np.float32(info.max), y)
    return None


TABLE = {
    KernelId.GEMM: gemm,
    KernelId.CONV2D: conv2d,
    KernelId.RELU: relu,
    KernelId.ADD: add,
    KernelId.SOFTMAX: softmax,
    KernelId.LAYERNORM: layernorm,
    KernelId.MAXPOOL: maxpool,
    KernelId.AVGPOOL: avgpool,
    KernelId.GLOBALAVGPOOL: globalavgpool,
    KernelId.QUANTIZE: quantize,
}
