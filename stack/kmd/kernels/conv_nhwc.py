"""CONV2D launches with ``layout`` 1 (NHWC activations), prepared when a command buffer
records them; NCHW launches go on to :func:`stack.kmd.kernels.dnnl_conv.conv2d` unchanged.

NHWC is oneDNN's own activation layout, so here X, R and Y are oneDNN's source, sum post-op
operand and destination where they lie: no reorder in or out (the NCHW path reorders X in and Y
out on every launch, about 3.6 us a convolution on the small CNN and 14-16 ms of a ResNet-50
run). W is still reordered once, at record time, into the primitive's blocked layout; R is
copied into Y before the product (oneDNN's ``sum`` post-op adds the destination's contents);
a fused max pool is oneDNN's pooling from the NHWC product (the thread's scratch) into Y.

A 1x1 convolution with fewer multiply-adds than
:data:`~stack.kmd.kernels.dnnl_conv.POINTWISE_MACS` (or any 1x1 one where oneDNN cannot be
loaded) is one GEMM on NHWC: ``Y[pixels, M] = X[pixels, C] @ W[M, C]^T`` (a strided one copies
its sampled pixels first), then bias, residual and ReLU. Everything else returns None: the
kernel runs, which is the NCHW kernel on transposed copies (:mod:`stack.kmd.kernels.layout`).

Covered by oneDNN: one image, group 1, float32, C-contiguous operands, direct or Winograd, the
fused pool as on the NCHW path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from stack.kmd.kernels import conv, dnnl, dnnl_conv, parallel, scratch
from stack.kmd.kernels.dnnl import Handle, Library, check
from stack.kmd.kernels.dnnl_conv import (
    Primitive,
    conv_pd,
    md_strides,
    nchw_md,
    pool_pd,
    reorder,
    run_once,
)
from stack.kmd.kernels.ids import KernelId
from stack.kmd.kernels.layout import KernelLayout, layout_of, nchw_shape

Run = Callable[[], None]


def conv2d(
    ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> Run | None:
    """The prepared CONV2D launch (see the module docstring), or None for the kernel."""
    if layout_of(KernelId.CONV2D, ints) is not KernelLayout.NHWC:
        return dnnl_conv.conv2d(ins, outs, ints, fl)
    lib = dnnl.library()
    run = pointwise(ins, outs, ints, small_only=lib is not None)
    if run is not None or lib is None or not _covered(ins, outs, ints):
        return run
    return _prepare(lib, ins, outs, ints)


def pointwise(
    ins: list[Any], outs: list[Any], ints: tuple[int, ...], *, small_only: bool
) -> Run | None:
    """A 1x1, unpadded, ungrouped, unpooled direct NHWC convolution as one GEMM, or None."""
    x, w, y = ins[0], ins[1], outs[0]
    if x.ndim != 4 or w.ndim != 4 or w.shape[2:] != (1, 1) or any(ints[2:6]) or ints[8] != 1:
        return None
    if conv.algorithm(ints) or conv.pool_ints(ints) is not None or x.dtype.kind != "f":
        return None
    if any(a.dtype != x.dtype or not a.flags.c_contiguous for a in (*ins, *outs)):
        return None
    n, oh, ow, m = y.shape
    c = x.shape[3]
    if small_only and oh * ow * m * c >= dnnl_conv.POINTWISE_MACS:
        return None
    sh, sw = ints[0], ints[1]
    sampled = x[:, ::sh, ::sw, :][:, :oh, :ow, :]
    if sampled.shape != (n, oh, ow, c) or w.shape[:2] != (m, c):
        return None  # the kernel reports the disagreement
    strided = (sh, sw) != (1, 1)
    cols = np.empty((n * oh * ow, c), x.dtype) if strided else x.reshape(-1, c)
    wt = np.ascontiguousarray(w.reshape(m, c).T)  # kept: W is read at record time
    bias = np.array(ins[2]) if len(ins) > 2 else None
    residual = ins[3].reshape(-1, m) if len(ins) > 3 else None
    out, relu = y.reshape(-1, m), ints[9]
    dot, add, maximum, copyto = np.dot, np.add, np.maximum, np.copyto
    grid = cols.reshape(n, oh, ow, c)

    def run() -> None:
        if strided:
            copyto(grid, sampled)
        dot(cols, wt, out=out)
        if bias is not None:
            add(out, bias, out=out)
        if residual is not None:
            add(out, residual, out=out)
        if relu:
            maximum(out, 0, out=out)

    return run


def _covered(ins: list[Any], outs: list[Any], ints: tuple[int, ...]) -> bool:
    x, w = ins[0], ins[1]
    if x.ndim != 4 or x.shape[0] != 1 or ints[8] != 1 or conv.algorithm(ints) not in (0, 1):
        return False
    return all(a.dtype == np.float32 and a.flags.c_contiguous for a in (*ins, *outs)) and (
        conv.algorithm(ints) == 0 or (w.ndim == 4 and w.shape[:2] == (4, 4))
    )


def _prepare(lib: Library, ins: list[Any], outs: list[Any], ints: tuple[int, ...]) -> Run | None:
    x, y = ins[0], outs[0]
    w = dnnl_conv.weights(ins[1], ints)
    bias = ins[2] if len(ins) > 2 else None
    residual = ins[3] if len(ins) > 3 else None
    xs, ys = nchw_shape(x.shape), nchw_shape(y.shape)  # oneDNN's dims are logical NCHW
    conv_hw = conv.conv_hw(xs, w.shape, ints)
    pooled = conv.pool_ints(ints)
    if pooled is None and ys[1:] != (w.shape[0], *conv_hw):
        return None  # the kernel reports the disagreement at run time
    if pooled is not None and (residual is not None or ys[1] != w.shape[0]):
        return None
    macs = w.shape[0] * w.shape[1] * w.shape[2] * w.shape[3] * conv_hw[0] * conv_hw[1]
    threads = parallel.threads() if macs >= dnnl_conv.PARALLEL_MACS else 1
    lib.set_threads(threads)
    full_shape = (1, w.shape[0], *conv_hw)
    pd = conv_pd(lib, xs, w.shape, full_shape, ints, bias is not None, residual is not None)
    cv = Primitive(lib, pd)
    src_md, dst_md = cv.md(dnnl.QUERY_SRC_MD), cv.md(dnnl.QUERY_DST_MD)
    w_md = cv.md(dnnl.QUERY_WEIGHTS_MD)
    owners: list[tuple[Primitive, Handle]] = [(cv, cv.md(dnnl.QUERY_SCRATCHPAD_MD))]
    pool = None
    if pooled is not None:
        window = pool_pd(lib, dst_md, conv_hw, ys, pooled)
        if window is None:
            return None
        pool = Primitive(lib, window)
        owners += [(cv, dst_md), (pool, pool.md(dnnl.QUERY_SCRATCHPAD_MD))]
    size = lib.lib.dnnl_memory_desc_get_size
    packed = np.empty(size(w_md) // 4, np.float32)
    user_w = nchw_md(lib, w.shape)
    pack = reorder(lib, user_w, w_md)
    run_once(lib, pack, [(dnnl.ARG_SRC, pack.memory(user_w, w)),
                         (dnnl.ARG_DST, pack.memory(w_md, packed))])  # fmt: skip
    lib.lib.dnnl_memory_desc_destroy(user_w)
    mds = [md for _, md in owners]
    key = ("dnnl-conv-nhwc", xs, ys, tuple(size(md) for md in mds))
    nbytes = sum(size(md) for md in mds)

    def fresh() -> tuple[Any, ...]:
        bufs = tuple(np.empty(max(1, size(md) // 4), np.float32) for md in mds)
        return scratch.put(key, bufs, nbytes)

    bound = [fresh()]
    mems = [prim.memory(md, buf) for (prim, md), buf in zip(owners, bound[0], strict=True)]
    conv_dst = cv.memory(dst_md, y) if pool is None else mems[1]
    conv_args = [(dnnl.ARG_SRC, cv.memory(src_md, x)), (dnnl.ARG_WEIGHTS, cv.memory(w_md, packed)),
                 (dnnl.ARG_DST, conv_dst), (dnnl.ARG_SCRATCHPAD, mems[0])]  # fmt: skip
    b_md = md_strides(lib, (w.shape[0],), (1,))
    if bias is not None:
        conv_args.append((dnnl.ARG_BIAS, cv.memory(b_md, np.array(bias))))
    lib.lib.dnnl_memory_desc_destroy(b_md)
    steps: list[tuple[Primitive, list[tuple[int, Handle]]]] = [(cv, conv_args)]
    if pool is not None:
        y_md = pool.md(dnnl.QUERY_DST_MD)
        steps.append((pool, [(dnnl.ARG_SRC, mems[1]), (dnnl.ARG_DST, pool.memory(y_md, y)),
                             (dnnl.ARG_SCRATCHPAD, mems[2])]))  # fmt: skip
    calls = [(p.handle, len(pairs), p.args(pairs)) for p, pairs in steps]
    execute, stream = lib.lib.dnnl_primitive_execute, lib.stream
    get, set_handle = scratch.get, lib.lib.dnnl_memory_set_data_handle
    set_threads, copyto = lib.gomp.omp_set_num_threads, np.copyto
    in_place = residual is not None and residual.ctypes.data == y.ctypes.data

    def run() -> None:
        bufs = get(key) or fresh()
        if bufs is not bound[0]:  # another thread's (or a refreshed) scratch
            for mem, buf in zip(mems, bufs, strict=True):
                check("dnnl_memory_set_data_handle", set_handle(mem, buf.ctypes.data))
            bound[0] = bufs
        if residual is not None and not in_place:  # the sum post-op adds Y's contents
            copyto(y, residual)
        set_threads(threads)
        here = stream()
        for prim, n, args in calls:
            status = execute(prim, here, n, args)
            if status:
                check("dnnl_primitive_execute", status)

    run.owners = (steps, packed)  # type: ignore[attr-defined]  # alive as long as the closure
    return run
