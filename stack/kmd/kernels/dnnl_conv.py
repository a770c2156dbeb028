"""CONV2D launches through oneDNN's convolutions (:mod:`stack.kmd.kernels.dnnl`), prepared when
a command buffer records them.

The ``layout`` 0 path: X, Y and R are NCHW at the kernel's boundary; inside the launch oneDNN
works in NHWC, where its AVX-512 kernels (``brgconv``) run: X is reordered in, R is reordered
into the NHWC output (the ``sum`` post-op adds it), the product gets B and the ReLU as fused
post-ops, a fused max pool is oneDNN's pooling on the NHWC result, and the NHWC result is
reordered into Y. ResNet-50's 53 convolutions, one thread, 2-vCPU AVX-512 VM: 50 ms in oneDNN
alone, 64 ms with the reorders, 77 ms on the NumPy path (two threads: 26 and 36 ms). The
compiler keeps convolution chains NHWC on the CPU device and says so with ``layout`` 1: those
launches take :mod:`stack.kmd.kernels.conv_nhwc`, without the reorders.

1x1 convolutions with an output plane larger than ``POINTWISE_PLANE``, or fewer multiply-adds
than ``POINTWISE_MACS``, stay on the NumPy path: there a convolution is one GEMM over NCHW X,
no im2col to save, and the reorders of X, R and Y cost about what oneDNN saves on the product
(or more, on tiny ones). ResNet-50, one thread, NumPy against oneDNN with
its reorders: 56x56 planes 1.17 / 1.23 ms (64 -> 256), 1.59 / 1.68 ms (with the residual),
1.04 / 1.23 ms (256 -> 64); 28x28 0.79 / 0.87 ms (512 -> 128); 14x14 0.82 / 0.92, 0.76 / 0.74,
1.37 / 1.29 ms; 7x7 1.11 / 0.81 ms (512 -> 2048 with the residual), 1.07 / 0.79 ms; strided to
7x7 2.09 / 1.64 ms. The whole model's 53 convolutions: 77.1 ms NumPy, 63.7 ms oneDNN.

Prepared once per launch: the primitives (created with the device's thread count), W reordered
into the primitive's blocked layout, B copied, and memory objects over X, Y, R. W and B are
read when the command buffer records the launch (the KMD runs the kernel instead once their
allocation is written: :attr:`stack.kmd.command.Launch.sources`). The NHWC buffers and the
scratchpads are the calling thread's (:mod:`stack.kmd.kernels.scratch`), shared by launches of
one shape.

Covered: one image, group 1, float32, C-contiguous operands, direct (1x1 on small planes only) or
Winograd (whose weights are turned back into the 3x3 kernel: ``g = P U P^T`` with ``P`` the
left inverse of G, exact up to float32 rounding). Everything else, and every launch where
oneDNN cannot be loaded, takes :func:`stack.kmd.kernels.prepared_conv.conv2d` unchanged.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

import numpy as np

from stack.kmd.kernels import conv, dnnl, parallel, prepared_conv, scratch
from stack.kmd.kernels.dnnl import Handle, Library, check, dims

Run = Callable[[], None]
#: Largest output plane (oH * oW) of a 1x1 convolution run by oneDNN (see the module docstring).
POINTWISE_PLANE = 196
#: Fewest multiply-adds a convolution runs on more than one OpenMP thread. A smaller one runs
#: on the calling thread alone: its single-thread time (the small CNN's 16x16x16 3x3: 0.6 M
#: MACs, 9 us) is shorter than waking a sleeping OpenMP worker for each of its 3-4 primitives
#: on a busy machine (the small CNN at two threads: 4.6 ms per run against 0.41 ms at one).
PARALLEL_MACS = 1 << 24
#: Fewest multiply-adds of a 1x1 convolution run by oneDNN: below it the calls and reorders
#: cost more than the product (the small CNN's 16 -> 32 1x1/2 on 8x8: 4 us NumPy, 10 us oneDNN).
POINTWISE_MACS = 1 << 20
_G = np.array([[1, 0, 0], [0.5, 0.5, 0.5], [0.5, -0.5, 0.5], [0, 0, 1]], np.float64)
_P = np.linalg.pinv(_G)  # P @ G = I (G has full column rank)


def conv2d(
    ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> Run | None:
    """The prepared CONV2D launch: through oneDNN where it is covered, else the NumPy one."""
    lib = dnnl.library()
    run = _prepare(lib, ins, outs, ints) if lib is not None and _covered(ins, outs, ints) else None
    if run is not None:
        return run
    if parallel.tiles() > 1:  # the NumPy kernel splits it over the worker pool
        return None
    return prepared_conv.conv2d(ins, outs, ints, fl)


def _covered(ins: list[Any], outs: list[Any], ints: tuple[int, ...]) -> bool:
    x, w = ins[0], ins[1]
    if conv.algorithm(ints) == 0 and w.ndim == 4 and w.shape[2:] == (1, 1):
        oh, ow = conv.conv_hw(x.shape, w.shape, ints)
        if oh * ow > POINTWISE_PLANE or oh * ow * w.shape[0] * w.shape[1] < POINTWISE_MACS:
            return False  # a GEMM on NCHW already: the NumPy path skips the reorders
    if x.ndim != 4 or x.shape[0] != 1 or ints[8] != 1 or conv.algorithm(ints) not in (0, 1):
        return False
    return all(a.dtype == np.float32 and a.flags.c_contiguous for a in (*ins, *outs)) and (
        conv.algorithm(ints) == 0 or (w.ndim == 4 and w.shape[:2] == (4, 4))
    )


def weights(w: Any, ints: tuple[int, ...]) -> Any:
    """W as OIHW float32: the ABI's W, or the 3x3 kernel behind Winograd weights U[4,4,M,C]."""
    if conv.algorithm(ints) == 0:
        return w
    g = np.einsum("ia,abmc,jb->mcij", _P, w.astype(np.float64), _P)
    return np.ascontiguousarray(g, np.float32)


def nhwc_md(lib: Library, shape: tuple[int, ...]) -> Handle:
    _, c, h, w = shape
    return md_strides(lib, shape, (h * w * c, 1, w * c, c))


def nchw_md(lib: Library, shape: tuple[int, ...]) -> Handle:
    strides = [1] * len(shape)
    for k in range(len(shape) - 2, -1, -1):
        strides[k] = strides[k + 1] * shape[k + 1]
    return md_strides(lib, shape, tuple(strides))


def md_strides(lib: Library, shape: tuple[int, ...], strides: tuple[int, ...]) -> Handle:
    md = Handle()
    status = lib.lib.dnnl_memory_desc_create_with_strides(
        ctypes.byref(md), len(shape), dims(shape), dnnl.F32, dims(strides)
    )
    check("dnnl_memory_desc_create_with_strides", status)
    return md


def md_any(lib: Library, shape: tuple[int, ...]) -> Handle:
    md = Handle()
    status = lib.lib.dnnl_memory_desc_create_with_tag(
        ctypes.byref(md), len(shape), dims(shape), dnnl.F32, dnnl.FORMAT_ANY
    )
    check("dnnl_memory_desc_create_with_tag", status)
    return md


class Primitive:
    """A primitive (from its descriptor) and its memory objects; destroyed with this object."""

    def __init__(self, lib: Library, pd: Handle) -> None:
        self.lib = lib
        self.pd = pd
        self.handle = Handle()
        status = lib.lib.dnnl_primitive_create(ctypes.byref(self.handle), pd)
        check("dnnl_primitive_create", status)
        self.mems: list[Handle] = []
        self.keep: list[Any] = []  # the arrays the memory objects point into

    def md(self, query: int) -> Handle:
        return Handle(self.lib.lib.dnnl_primitive_desc_query_md(self.pd, query, 0))

    def memory(self, md: Handle, array: Any) -> Handle:
        mem = Handle()
        ptr = Handle(array.ctypes.data)
        status = self.lib.lib.dnnl_memory_create(ctypes.byref(mem), md, self.lib.engine, ptr)
        check("dnnl_memory_create", status)
        self.mems.append(mem)
        self.keep.append(array)
        return mem

    def args(self, pairs: list[tuple[int, Handle]]) -> Any:
        return (dnnl.ExecArg * len(pairs))(*[dnnl.ExecArg(a, m) for a, m in pairs])

    def __del__(self) -> None:
        lib = self.lib.lib
        for mem in self.mems:
            lib.dnnl_memory_destroy(mem)
        lib.dnnl_primitive_destroy(self.handle)
        lib.dnnl_primitive_desc_destroy(self.pd)


def reorder(lib: Library, src: Handle, dst: Handle) -> Primitive:
    pd = Handle()
    status = lib.lib.dnnl_reorder_primitive_desc_create(
        ctypes.byref(pd), src, lib.engine, dst, lib.engine, None
    )
    check("dnnl_reorder_primitive_desc_create", status)
    return Primitive(lib, pd)


def conv_pd(
    lib: Library, x_shape: tuple, w_shape: tuple, y_shape: tuple, ints: tuple, bias: bool,
    residual: bool,
) -> Handle:  # fmt: skip
    sh, sw, pt, pl, pb, pr, dh, dw = ints[:8]
    attr, post = Handle(), Handle()
    check("dnnl_primitive_attr_create", lib.lib.dnnl_primitive_attr_create(ctypes.byref(attr)))
    check("dnnl_post_ops_create", lib.lib.dnnl_post_ops_create(ctypes.byref(post)))
    try:
        mode = lib.lib.dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl.SCRATCHPAD_USER)
        check("dnnl_primitive_attr_set_scratchpad_mode", mode)
        if residual:  # Y = conv + B + R: R is in the output before the product is added to it
            check("dnnl_post_ops_append_sum", lib.lib.dnnl_post_ops_append_sum(post, 1.0, 0, 0))
        if ints[9]:
            status = lib.lib.dnnl_post_ops_append_eltwise(post, dnnl.ELTWISE_RELU, 0.0, 0.0)
            check("dnnl_post_ops_append_eltwise", status)
        status = lib.lib.dnnl_primitive_attr_set_post_ops(attr, post)
        check("dnnl_primitive_attr_set_post_ops", status)
        mds = [
            nhwc_md(lib, x_shape), md_any(lib, w_shape),
            md_strides(lib, (w_shape[0],), (1,)) if bias else None, nhwc_md(lib, y_shape),
        ]  # fmt: skip
        pd = Handle()
        status = lib.lib.dnnl_convolution_forward_primitive_desc_create(
            ctypes.byref(pd), lib.engine, dnnl.FORWARD_INFERENCE, dnnl.CONVOLUTION_DIRECT,
            *mds, dims((sh, sw)), dims((dh - 1, dw - 1)), dims((pt, pl)), dims((pb, pr)), attr,
        )  # fmt: skip
        for md in mds:
            if md is not None:
                lib.lib.dnnl_memory_desc_destroy(md)
        check("dnnl_convolution_forward_primitive_desc_create", status)
        return pd
    finally:
        lib.lib.dnnl_post_ops_destroy(post)
        lib.lib.dnnl_primitive_attr_destroy(attr)


def pool_pd(
    lib: Library, src: Handle, conv_hw: tuple[int, int], y_shape: tuple, ints: tuple[int, ...]
) -> Handle | None:
    """oneDNN's max pool (MAXPOOL immediates ``ints``; padding never wins) of the NHWC ``src``
    into an NHWC ``y_shape``; None when Y's size would need a negative right pad."""
    kh, kw, sh, sw, pt, pl = ints[:6]
    pb = (y_shape[2] - 1) * sh + kh - conv_hw[0] - pt  # the pads that make Y's size exact
    pr = (y_shape[3] - 1) * sw + kw - conv_hw[1] - pl
    if min(pb, pr) < 0:
        return None
    attr = Handle()
    check("dnnl_primitive_attr_create", lib.lib.dnnl_primitive_attr_create(ctypes.byref(attr)))
    dst = nhwc_md(lib, y_shape)
    try:
        mode = lib.lib.dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl.SCRATCHPAD_USER)
        check("dnnl_primitive_attr_set_scratchpad_mode", mode)
        pd = Handle()
        status = lib.lib.dnnl_pooling_forward_primitive_desc_create(
            ctypes.byref(pd), lib.engine, dnnl.FORWARD_INFERENCE, dnnl.POOLING_MAX, src, dst,
            dims((sh, sw)), dims((kh, kw)), dims((0, 0)), dims((pt, pl)), dims((pb, pr)), attr,
        )  # fmt: skip
        check("dnnl_pooling_forward_primitive_desc_create", status)
        return pd
    finally:
        lib.lib.dnnl_memory_desc_destroy(dst)
        lib.lib.dnnl_primitive_attr_destroy(attr)


def _prepare(lib: Library, ins: list[Any], outs: list[Any], ints: tuple[int, ...]) -> Run | None:
    x, y = ins[0], outs[0]
    w = weights(ins[1], ints)
    bias = ins[2] if len(ins) > 2 else None
    residual = ins[3] if len(ins) > 3 else None
    conv_hw = conv.conv_hw(x.shape, w.shape, ints)
    pooled = conv.pool_ints(ints)
    if pooled is None and y.shape[1:] != (w.shape[0], *conv_hw):
        return None  # the NumPy kernel reports the disagreement at run time, as before
    if pooled is not None and (residual is not None or y.shape[1] != w.shape[0]):
        return None
    macs = w.shape[0] * w.shape[1] * w.shape[2] * w.shape[3] * conv_hw[0] * conv_hw[1]
    threads = parallel.threads() if macs >= PARALLEL_MACS else 1
    lib.set_threads(threads)
    full_shape = (1, w.shape[0], *conv_hw)
    pd = conv_pd(lib, x.shape, w.shape, full_shape, ints, bias is not None, residual is not None)
    cv = Primitive(lib, pd)
    src_md, dst_md = cv.md(dnnl.QUERY_SRC_MD), cv.md(dnnl.QUERY_DST_MD)
    w_md = cv.md(dnnl.QUERY_WEIGHTS_MD)
    mds = [src_md, dst_md, cv.md(dnnl.QUERY_SCRATCHPAD_MD)]  # the thread's buffers
    pool = None
    if pooled is not None:
        window = pool_pd(lib, dst_md, conv_hw, y.shape, pooled)
        if window is None:
            return None
        pool = Primitive(lib, window)
        mds += [pool.md(dnnl.QUERY_DST_MD), pool.md(dnnl.QUERY_SCRATCHPAD_MD)]
    size = lib.lib.dnnl_memory_desc_get_size
    packed = np.empty(size(w_md) // 4, np.float32)
    user_w, user_x, user_y = nchw_md(lib, w.shape), nchw_md(lib, x.shape), nchw_md(lib, y.shape)
    pack = reorder(lib, user_w, w_md)
    run_once(lib, pack, [(dnnl.ARG_SRC, pack.memory(user_w, w)),
                         (dnnl.ARG_DST, pack.memory(w_md, packed))])  # fmt: skip
    key = ("dnnl-conv", x.shape, y.shape, tuple(size(md) for md in mds))
    nbytes = sum(size(md) for md in mds)

    def fresh() -> tuple[Any, ...]:
        bufs = tuple(np.empty(max(1, size(md) // 4), np.float32) for md in mds)
        return scratch.put(key, bufs, nbytes)

    bound = [fresh()]
    mems = [(pool if k > 2 and pool is not None else cv).memory(md, buf)
            for k, (md, buf) in enumerate(zip(mds, bound[0], strict=True))]  # fmt: skip
    xm, ym = mems[0], mems[1]
    conv_args = [(dnnl.ARG_SRC, xm), (dnnl.ARG_WEIGHTS, cv.memory(w_md, packed)),
                 (dnnl.ARG_DST, ym), (dnnl.ARG_SCRATCHPAD, mems[2])]  # fmt: skip
    b_md = md_strides(lib, (w.shape[0],), (1,))
    if bias is not None:
        conv_args.append((dnnl.ARG_BIAS, cv.memory(b_md, np.array(bias))))
    x_in = reorder(lib, user_x, src_md)
    steps = [(x_in, [(dnnl.ARG_SRC, x_in.memory(user_x, x)), (dnnl.ARG_DST, xm)])]
    if residual is not None:  # into the output, where the sum post-op reads it
        r_in = reorder(lib, user_y, dst_md)
        steps.append((r_in, [(dnnl.ARG_SRC, r_in.memory(user_y, residual)), (dnnl.ARG_DST, ym)]))
    steps.append((cv, conv_args))
    out_md, out_mem = dst_md, ym
    if pool is not None:
        steps.append((pool, [(dnnl.ARG_SRC, ym), (dnnl.ARG_DST, mems[3]),
                             (dnnl.ARG_SCRATCHPAD, mems[4])]))  # fmt: skip
        out_md, out_mem = mds[3], mems[3]
    y_out = reorder(lib, out_md, user_y)
    steps.append((y_out, [(dnnl.ARG_SRC, out_mem), (dnnl.ARG_DST, y_out.memory(user_y, y))]))
    calls = [(p.handle, len(pairs), p.args(pairs)) for p, pairs in steps]
    for md in (user_w, user_x, user_y, b_md):
        lib.lib.dnnl_memory_desc_destroy(md)  # primitives and memory objects keep copies
    execute, stream = lib.lib.dnnl_primitive_execute, lib.stream
    get, set_handle = scratch.get, lib.lib.dnnl_memory_set_data_handle
    set_threads = lib.gomp.omp_set_num_threads

    def run() -> None:
        bufs = get(key) or fresh()
        if bufs is not bound[0]:  # another thread's (or a refreshed) NHWC buffers
            for mem, buf in zip(mems, bufs, strict=True):
                check("dnnl_memory_set_data_handle", set_handle(mem, buf.ctypes.data))
            bound[0] = bufs
        set_threads(threads)
        here = stream()
        for prim, n, args in calls:
            status = execute(prim, here, n, args)
            if status:
                check("dnnl_primitive_execute", status)

    run.owners = (steps, packed)  # type: ignore[attr-defined]  # alive as long as the closure
    return run


def run_once(lib: Library, prim: Primitive, pairs: list[tuple[int, Handle]]) -> None:
    """Execute ``prim`` once with ``pairs`` and wait for it."""
    stream = lib.stream()
    status = lib.lib.dnnl_primitive_execute(prim.handle, stream, len(pairs), prim.args(pairs))
    check("dnnl_primitive_execute", status)
    check("dnnl_stream_wait", lib.lib.dnnl_stream_wait(stream))
