# ruff: noqa: E501 - the case tables read best one case per line
"""Each translator on its ops: the blobs it emits decode back to exactly what was meant."""

from __future__ import annotations

import pytest

from stack.kmd.blob import decode
from stack.kmd.kernels.abi import abi_of
from stack.kmd.kernels.ids import KernelId
from stack.umd import DType, Layout, OpKind, OpRequest, TensorDesc
from stack.umd.errors import InvalidRequestError, ShapeError, UnsupportedDtypeError
from stack.umd.pipeline import Pipeline
from tests.stack.umd.descs import I8, I32, I64, U8, F, T, refused
from tests.stack.umd.translator_cases import CASES


@pytest.mark.parametrize(
    ("req", "kernel", "ints", "floats"), CASES, ids=[c[0].op.name for c in CASES]
)
def test_blob_decodes_to_the_op(
    req: OpRequest, kernel: KernelId, ints: tuple, floats: tuple
) -> None:
    prog = Pipeline().compile(req)
    addrs = tuple(d.addr for d in (*req.inputs, *req.outputs))
    (blob_bytes,) = prog.patch(addrs)
    blob = decode(blob_bytes)
    assert blob.kernel_id is kernel
    descs = (*req.inputs, *req.outputs)
    assert [p.addr for p in blob.params] == [d.addr for d in descs]
    assert [p.shape for p in blob.params] == [d.shape for d in descs]
    assert [p.dtype for p in blob.params] == [d.dtype for d in descs]
    assert [p.nbytes for p in blob.params] == [d.byte_size for d in descs]
    assert blob.ints == ints and blob.floats == pytest.approx(floats)
    abi = abi_of(kernel)
    if abi.int_list is None:
        assert len(blob.ints) == len(abi.ints) and len(blob.floats) == len(abi.floats)
    assert all(g >= 1 for g in blob.launch.grid) and all(b >= 1 for b in blob.launch.block)


def test_nhwc_conv_runs_in_nhwc_with_the_layout_immediate() -> None:
    """An NHWC X and Y: one CONV2D blob reading and writing them in place, ``layout`` 1."""
    x, w, y = (
        T((1, 8, 8, 3), layout=Layout.NHWC),
        T((4, 3, 3, 3)),
        T((1, 8, 8, 4), layout=Layout.NHWC),
    )
    req = OpRequest.make(OpKind.CONV2D, [x, w], [y], pads=(1, 1, 1, 1))
    prog = Pipeline().compile(req)
    assert prog.scratch == () and prog.primary == 0
    (main,) = (decode(b) for b in prog.patch((x.addr, w.addr, y.addr)))
    assert main.kernel_id is KernelId.CONV2D and main.ints[19] == 1
    assert [p.addr for p in main.params] == [x.addr, w.addr, y.addr]
    assert [p.shape for p in main.params] == [(1, 8, 8, 3), (4, 3, 3, 3), (1, 8, 8, 4)]


def test_nhwc_conv_into_an_nchw_output_converts_the_output_only() -> None:
    """X NHWC, Y NCHW: the kernel runs NHWC into scratch, one TRANSPOSE writes Y."""
    x, w, y = T((1, 8, 8, 3), layout=Layout.NHWC), T((4, 3, 3, 3)), T((1, 4, 8, 8))
    y = TensorDesc(y.addr, y.shape, y.dtype, Layout.NCHW)
    prog = Pipeline().compile(OpRequest.make(OpKind.CONV2D, [x, w], [y], pads=(1, 1, 1, 1)))
    assert prog.scratch == (1 * 8 * 8 * 4 * 4,) and prog.primary == 0
    s0 = 0xA0000
    main, post = (decode(b) for b in prog.patch((x.addr, w.addr, y.addr, s0)))
    assert main.ints[19] == 1 and [p.addr for p in main.params] == [x.addr, w.addr, s0]
    assert post.kernel_id is KernelId.TRANSPOSE and post.ints == (0, 3, 1, 2)
    assert [p.addr for p in post.params] == [s0, y.addr]


def test_nhwc_pools_run_in_nhwc() -> None:
    for op, attrs, out in (
        (OpKind.MAXPOOL, {"kernel_shape": (2, 2), "strides": (2, 2)}, (1, 4, 4, 3)),
        (OpKind.AVGPOOL, {"kernel_shape": (2, 2), "strides": (2, 2)}, (1, 4, 4, 3)),
        (OpKind.GLOBALAVGPOOL, {}, (1, 1, 1, 3)),
    ):
        x, y = T((1, 8, 8, 3), layout=Layout.NHWC), T(out, layout=Layout.NHWC)
        prog = Pipeline().compile(OpRequest.make(op, [x], [y], **attrs))
        (main,) = (decode(b) for b in prog.patch((x.addr, y.addr)))
        assert prog.scratch == () and main.ints[-1] == 1, op


def test_nhwc_max_unpool_reads_and_writes_in_nchw_order() -> None:
    """The indices are flat NCHW places: X, I and Y are converted around the kernel."""
    x, i = T((1, 2, 2, 3), layout=Layout.NHWC), T((1, 2, 2, 3), I64, Layout.NHWC)
    y = T((1, 4, 4, 3), layout=Layout.NHWC)
    req = OpRequest.make(OpKind.MAXUNPOOL, [x, i], [y], kernel_shape=(2, 2), strides=(2, 2))
    prog = Pipeline().compile(req)
    assert prog.scratch == (12 * 4, 12 * 8, 48 * 4) and prog.primary == 2
    s0, s1, s2 = 0xA0000, 0xB0000, 0xC0000
    blobs = [decode(b) for b in prog.patch((x.addr, i.addr, y.addr, s0, s1, s2))]
    assert [b.kernel_id for b in blobs] == [KernelId.TRANSPOSE, KernelId.TRANSPOSE,
                                            KernelId.MAXUNPOOL, KernelId.TRANSPOSE]  # fmt: skip
    assert [b.ints for b in blobs] == [(0, 3, 1, 2), (0, 3, 1, 2), (), (0, 2, 3, 1)]
    main = blobs[2]
    assert [p.addr for p in main.params] == [s0, s1, s2]
    assert [p.shape for p in main.params] == [(1, 3, 2, 2), (1, 3, 2, 2), (1, 3, 4, 4)]


def test_nhwc_col2im_writes_in_nchw_order() -> None:
    """Y's channel axis is the second: a 4-D NHWC output is converted after the kernel."""
    x, y = T((1, 8, 4)), T((1, 3, 3, 2), layout=Layout.NHWC)
    req = OpRequest.make(OpKind.COL2IM, [x], [y], image_shape=(3, 3), block_shape=(2, 2))
    prog = Pipeline().compile(req)
    assert prog.scratch == (18 * 4,) and prog.primary == 0
    s0 = 0xA0000
    blobs = [decode(b) for b in prog.patch((x.addr, y.addr, s0))]
    assert [b.kernel_id for b in blobs] == [KernelId.COL2IM, KernelId.TRANSPOSE]
    assert [p.addr for p in blobs[0].params] == [x.addr, s0]
    assert blobs[0].params[1].shape == (1, 2, 3, 3) and blobs[1].ints == (0, 2, 3, 1)


def test_nhwc_deform_conv_converts_its_activations_around_the_kernel() -> None:
    """X, offset and mask have channels on axis 1, as Y: NHWC ones are transposed to NCHW
    before the kernel and back after it; W and B are taken as they are."""
    x, w = T((1, 5, 5, 2), layout=Layout.NHWC), T((3, 2, 3, 3))
    off, b = T((1, 3, 3, 18), layout=Layout.NHWC), T((3,))
    mask, y = T((1, 3, 3, 9), layout=Layout.NHWC), T((1, 3, 3, 3), layout=Layout.NHWC)
    req = OpRequest.make(OpKind.DEFORM_CONV, [x, w, off, b, mask], [y])
    prog = Pipeline().compile(req)
    assert prog.scratch == (50 * 4, 162 * 4, 81 * 4, 27 * 4) and prog.primary == 3
    s = (0xA0000, 0xB0000, 0xC0000, 0xD0000)
    addrs = (x.addr, w.addr, off.addr, b.addr, mask.addr, y.addr, *s)
    blobs = [decode(blob) for blob in prog.patch(addrs)]
    kinds = [blob.kernel_id for blob in blobs]
    assert kinds == [*[KernelId.TRANSPOSE] * 3, KernelId.DEFORM_CONV, KernelId.TRANSPOSE]
    main = blobs[3]
    assert [p.addr for p in main.params] == [s[0], w.addr, s[1], b.addr, s[2], s[3]]
    shapes = [(1, 2, 5, 5), (3, 2, 3, 3), (1, 18, 3, 3), (3,), (1, 9, 3, 3), (1, 3, 3, 3)]
    assert [p.shape for p in main.params] == shapes
    assert blobs[4].ints == (0, 2, 3, 1)


def test_an_nhwc_affine_grid_is_written_in_its_logical_order() -> None:
    """The grid's last axis holds coordinates, not channels: no conversion around the kernel."""
    theta, grid = T((1, 2, 3)), T((1, 4, 5, 2), layout=Layout.NHWC)
    req = OpRequest.make(OpKind.AFFINE_GRID, [theta], [grid], size=(1, 3, 4, 5))
    prog = Pipeline().compile(req)
    assert prog.scratch == ()
    (blob,) = [decode(b) for b in prog.patch((theta.addr, grid.addr))]
    assert blob.kernel_id is KernelId.AFFINE_GRID
    assert [p.addr for p in blob.params] == [theta.addr, grid.addr]
    assert blob.params[1].shape == (1, 4, 5, 2)


def test_mixed_layouts_in_elementwise_convert_to_the_output_layout() -> None:
    a = T((1, 2, 3, 4), layout=Layout.NCHW)
    b = T((1, 3, 4, 2), layout=Layout.NHWC)
    y = T((1, 3, 4, 2), layout=Layout.NHWC)
    prog = Pipeline().compile(OpRequest.make(OpKind.ADD, [a, b], [y]))
    assert len(prog.blobs) == 2 and prog.blobs[0].kernel_id is KernelId.TRANSPOSE


@pytest.mark.parametrize(
    ("req", "err", "field"),
    [
        (OpRequest.make(OpKind.GEMM, [T((4, 8)), T((7, 3))], [T((4, 3))]), ShapeError, "inputs[1].shape"),
        (OpRequest.make(OpKind.GEMM, [T((4, 8)), T((8, 3))], [T((4, 4))]), ShapeError, "outputs[0].shape"),
        (OpRequest.make(OpKind.GEMM, [T((4, 8)), T((8, 3), DType.F16)], [T((4, 3))]), UnsupportedDtypeError, "inputs[1].dtype"),
        (OpRequest.make(OpKind.MATMUL, [T((4, 8), I32), T((8, 3), I32)], [T((4, 3), I32)]), UnsupportedDtypeError, "inputs[0].dtype"),
        (OpRequest.make(OpKind.GEMM, [T((4, 8))], [T((4, 3))]), InvalidRequestError, "inputs"),
        (OpRequest.make(OpKind.CONV2D, [T((1, 3, 8, 8)), T((4, 2, 3, 3))], [T((1, 4, 6, 6))]), ShapeError, "inputs[1].shape"),
        (OpRequest.make(OpKind.CONV2D, [T((1, 2, 8, 8)), T((4, 2, 3, 3)), T((4,)), T((1, 4, 8, 8))], [T((1, 4, 6, 6))]), ShapeError, "inputs[3].shape"),
        (OpRequest.make(OpKind.CONV2D, [T((1, 3, 8, 8)), T((4, 3, 3, 3))], [T((1, 4, 6, 6))], strides=(1, 1, 1)), InvalidRequestError, "attrs.strides"),
        (OpRequest.make(OpKind.CONV2D, [T((1, 3, 8, 8)), T((4, 4, 4, 3))], [T((1, 4, 3, 3))], strides=(2, 2), algorithm=1), ShapeError, "attrs.algorithm"),
        (OpRequest.make(OpKind.CONV2D, [T((1, 3, 8, 8)), T((4, 4, 4, 3))], [T((1, 4, 6, 6))], algorithm=2), ShapeError, "attrs.algorithm"),
        (OpRequest.make(OpKind.CONV2D, [T((1, 3, 8, 8)), T((3, 3, 4, 3))], [T((1, 4, 6, 6))], algorithm=1), ShapeError, "inputs[1].shape"),
        (OpRequest.make(OpKind.CONV_TRANSPOSE, [T((1, 3, 4, 4)), T((4, 2, 3, 3))], [T((1, 2, 6, 6))]), ShapeError, "inputs[1].shape"),
        (OpRequest.make(OpKind.CONV_TRANSPOSE, [T((1, 4, 4, 4)), T((4, 2, 3, 3))], [T((1, 2, 7, 6))]), ShapeError, "outputs[0].shape"),
        (OpRequest.make(OpKind.CONV_TRANSPOSE, [T((1, 4, 4, 4)), T((4, 2, 3, 3))], [T((1, 2, 6, 6))], group=0), ShapeError, "attrs.group"),
        (OpRequest.make(OpKind.CONV_TRANSPOSE, [T((1, 4, 4, 4)), T((4, 2, 3, 3), DType.F64)], [T((1, 2, 6, 6))]), UnsupportedDtypeError, "inputs[1].dtype"),
        (OpRequest.make(OpKind.CONV_TRANSPOSE, [T((1, 4, 4, 4), I32), T((4, 2, 3, 3), I32)], [T((1, 2, 6, 6), I32)]), UnsupportedDtypeError, "inputs[0].dtype"),
        (OpRequest.make(OpKind.MAXPOOL, [T((1, 3, 8, 8))], [T((1, 3, 4, 4))]), InvalidRequestError, "attrs.kernel_shape"),
        (OpRequest.make(OpKind.MAXUNPOOL, [T((1, 3, 2, 2))], [T((1, 3, 4, 4))], kernel_shape=(2, 2), strides=(2, 2)), InvalidRequestError, "inputs"),
        (OpRequest.make(OpKind.MAXUNPOOL, [T((3, 2)), T((3, 2), I64)], [T((3, 4))], kernel_shape=(2,), strides=(2,)), ShapeError, "inputs[0].shape"),
        (OpRequest.make(OpKind.MAXUNPOOL, [T((1, 3, 2), I32), T((1, 3, 2), I64)], [T((1, 3, 4), I32)], kernel_shape=(2,), strides=(2,)), UnsupportedDtypeError, "inputs[0].dtype"),
        (OpRequest.make(OpKind.MAXUNPOOL, [T((1, 3, 2)), T((1, 3, 2))], [T((1, 3, 4))], kernel_shape=(2,), strides=(2,)), UnsupportedDtypeError, "inputs[1].dtype"),
        (OpRequest.make(OpKind.MAXUNPOOL, [T((1, 3, 2)), T((1, 3, 2), I64)], [T((1, 3, 4), DType.F16)], kernel_shape=(2,), strides=(2,)), UnsupportedDtypeError, "outputs[0].dtype"),
        (OpRequest.make(OpKind.MAXUNPOOL, [T((1, 3, 2)), T((1, 3, 2), I64)], [T((1, 3, 4))], strides=(2,)), InvalidRequestError, "attrs.kernel_shape"),
        (OpRequest.make(OpKind.MAXUNPOOL, [T((1, 3, 2)), T((1, 3, 2), I64)], [T((1, 3, 4))], kernel_shape=(2, 2)), InvalidRequestError, "attrs.kernel_shape"),
        (OpRequest.make(OpKind.MAXUNPOOL, [T((1, 3, 2)), T((1, 3, 2), I64)], [T((1, 3, 4))], kernel_shape=(2,), strides=(0,)), InvalidRequestError, "attrs.strides"),
        (OpRequest.make(OpKind.MAXUNPOOL, [T((1, 3, 2)), T((1, 3, 2), I64)], [T((1, 3, 4))], kernel_shape=(2,), pads=(-1, 0)), InvalidRequestError, "attrs.pads"),
        (OpRequest.make(OpKind.MAXUNPOOL, [T((1, 3, 1)), T((1, 3, 1), I64)], [T((1, 3, 1))], kernel_shape=(1,), pads=(1, 0)), ShapeError, "attrs.pads"),
        (OpRequest.make(OpKind.MAXUNPOOL, [T((1, 3, 2)), T((1, 3, 3), I64)], [T((1, 3, 4))], kernel_shape=(2,), strides=(2,)), ShapeError, "inputs[1].shape"),
        (OpRequest.make(OpKind.MAXUNPOOL, [T((1, 3, 2)), T((1, 3, 2), I64)], [T((1, 3, 3))], kernel_shape=(2,), strides=(2,), output_shape=(1, 3, 3)), ShapeError, "attrs.output_shape"),
        (OpRequest.make(OpKind.GLOBALLPPOOL, [T((1, 3, 2, 2))], [T((1, 3, 1, 1))], p=0), ShapeError, "attrs.p"),
        (OpRequest.make(OpKind.GLOBALLPPOOL, [T((1, 3, 2, 2), I32)], [T((1, 3, 1, 1), I32)]), UnsupportedDtypeError, "inputs[0].dtype"),
        (OpRequest.make(OpKind.GLOBALLPPOOL, [T((3, 4))], [T((3, 1))]), ShapeError, "inputs[0].shape"),
        (OpRequest.make(OpKind.MAXROIPOOL, [T((1, 3, 4, 4)), T((2, 5))], [T((2, 3, 1, 1))], pooled_shape=(0, 1)), ShapeError, "attrs.pooled_shape"),
        (OpRequest.make(OpKind.MAXROIPOOL, [T((1, 3, 4, 4)), T((2, 4))], [T((2, 3, 1, 1))], pooled_shape=(1, 1)), ShapeError, "inputs[1].shape"),
        (OpRequest.make(OpKind.MAXROIPOOL, [T((1, 3, 4, 4)), T((2, 5))], [T((2, 3, 1, 1))]), InvalidRequestError, "attrs.pooled_shape"),
        (OpRequest.make(OpKind.ROIALIGN, [T((1, 3, 4, 4)), T((2, 4)), T((2,), I64)], [T((2, 3, 1, 1))], output_height=0), ShapeError, "attrs.output_height"),
        (OpRequest.make(OpKind.ROIALIGN, [T((1, 3, 4, 4)), T((2, 4)), T((2,), I64)], [T((2, 3, 1, 1))], sampling_ratio=-1), ShapeError, "attrs.sampling_ratio"),
        (OpRequest.make(OpKind.ROIALIGN, [T((1, 3, 4, 4)), T((2, 4)), T((2,), I64)], [T((2, 3, 1, 1))], mode="sum"), InvalidRequestError, "attrs.mode"),
        (OpRequest.make(OpKind.ROIALIGN, [T((1, 3, 4, 4)), T((2, 4)), T((2,), I64)], [T((2, 3, 1, 1))], coordinate_transformation_mode="asymmetric"), InvalidRequestError, "attrs.coordinate_transformation_mode"),
        (OpRequest.make(OpKind.ROIALIGN, [T((1, 3, 4, 4)), T((2, 5)), T((2,), I64)], [T((2, 3, 1, 1))]), ShapeError, "inputs[1].shape"),
        (OpRequest.make(OpKind.ROIALIGN, [T((1, 3, 4, 4)), T((2, 4)), T((3,), I64)], [T((2, 3, 1, 1))]), ShapeError, "inputs[2].shape"),
        (OpRequest.make(OpKind.ROIALIGN, [T((1, 3, 4, 4)), T((2, 4)), T((2,))], [T((2, 3, 1, 1))]), UnsupportedDtypeError, "inputs[2].dtype"),
        (OpRequest.make(OpKind.ROIALIGN, [T((1, 3, 4, 4)), T((2, 4))], [T((2, 3, 1, 1))]), InvalidRequestError, "inputs"),
        (OpRequest.make(OpKind.GRID_SAMPLE, [T((1, 3, 4, 4)), T((1, 2, 2, 2))], [T((1, 3, 2, 2))], mode="bilinear"), InvalidRequestError, "attrs.mode"),
        (OpRequest.make(OpKind.GRID_SAMPLE, [T((1, 3, 4, 4)), T((1, 2, 2, 2))], [T((1, 3, 2, 2))], padding_mode="wrap"), InvalidRequestError, "attrs.padding_mode"),
        (OpRequest.make(OpKind.GRID_SAMPLE, [T((1, 3, 4, 4)), T((1, 2, 2, 2))], [T((1, 3, 2, 2))], align_corners=2), InvalidRequestError, "attrs.align_corners"),
        (OpRequest.make(OpKind.GRID_SAMPLE, [T((1, 3, 4, 4)), T((1, 2, 2, 3))], [T((1, 3, 2, 2))]), ShapeError, "inputs[1].shape"),
        (OpRequest.make(OpKind.GRID_SAMPLE, [T((1, 3, 4, 4)), T((2, 2, 2, 2))], [T((1, 3, 2, 2))]), ShapeError, "inputs[1].shape"),
        (OpRequest.make(OpKind.GRID_SAMPLE, [T((1, 3, 4, 4)), T((1, 2, 2))], [T((1, 3, 2, 2))]), ShapeError, "inputs[1].shape"),
        (OpRequest.make(OpKind.GRID_SAMPLE, [T((1, 3, 4, 4)), T((1, 2, 2, 2))], [T((1, 3, 2, 3))]), ShapeError, "outputs[0].shape"),
        (OpRequest.make(OpKind.GRID_SAMPLE, [T((1, 4)), T((1, 2, 2))], [T((1, 4))]), ShapeError, "inputs[0].shape"),
        (OpRequest.make(OpKind.GRID_SAMPLE, [T((1, 3, 4, 4)), T((1, 2, 2, 2), I64)], [T((1, 3, 2, 2))]), UnsupportedDtypeError, "inputs[1].dtype"),
        (OpRequest.make(OpKind.GRID_SAMPLE, [T((1, 3, 4, 4), I64), T((1, 2, 2, 2))], [T((1, 3, 2, 2), I64)]), UnsupportedDtypeError, "inputs[0].dtype"),
        (OpRequest.make(OpKind.GRID_SAMPLE, [T((1, 3, 4, 4)), T((1, 2, 2, 2))], [T((1, 3, 2, 2), DType.F64)]), UnsupportedDtypeError, "outputs[0].dtype"),
        (OpRequest.make(OpKind.GRID_SAMPLE, [T((1, 3, 4, 4))], [T((1, 3, 2, 2))]), InvalidRequestError, "inputs"),
        (OpRequest.make(OpKind.AFFINE_GRID, [T((1, 2, 3))], [T((1, 2, 2, 2))]), InvalidRequestError, "attrs.size"),
        (OpRequest.make(OpKind.AFFINE_GRID, [T((1, 2, 3))], [T((1, 2, 2, 2))], size=(1, 1, 2)), InvalidRequestError, "attrs.size"),
        (OpRequest.make(OpKind.AFFINE_GRID, [T((1, 2, 3))], [T((1, 2, 2, 2))], size=(1, 1, 2, 2, 2, 2)), InvalidRequestError, "attrs.size"),
        (OpRequest.make(OpKind.AFFINE_GRID, [T((1, 2, 3))], [T((1, 2, 2, 2))], size=(1, 1, 0, 2)), InvalidRequestError, "attrs.size"),
        (OpRequest.make(OpKind.AFFINE_GRID, [T((1, 2, 3))], [T((1, 2, 2, 2))], size=(1, -1, 2, 2)), InvalidRequestError, "attrs.size"),
        (OpRequest.make(OpKind.AFFINE_GRID, [T((1, 2, 3))], [T((1, 2, 2, 2))], size=(1, 1, 2, 2), align_corners=2), InvalidRequestError, "attrs.align_corners"),
        (OpRequest.make(OpKind.AFFINE_GRID, [T((1, 2, 3))], [T((1, 2, 2, 2))], size=(2, 1, 2, 2)), ShapeError, "inputs[0].shape"),
        (OpRequest.make(OpKind.AFFINE_GRID, [T((1, 3, 4))], [T((1, 2, 2, 2))], size=(1, 1, 2, 2)), ShapeError, "inputs[0].shape"),
        (OpRequest.make(OpKind.AFFINE_GRID, [T((1, 2, 3))], [T((1, 2, 2, 2, 3))], size=(1, 1, 2, 2, 2)), ShapeError, "inputs[0].shape"),
        (OpRequest.make(OpKind.AFFINE_GRID, [T((1, 2, 3))], [T((1, 2, 3, 2))], size=(1, 1, 2, 2)), ShapeError, "outputs[0].shape"),
        (OpRequest.make(OpKind.AFFINE_GRID, [T((1, 2, 3), I32)], [T((1, 2, 2, 2), I32)], size=(1, 1, 2, 2)), UnsupportedDtypeError, "inputs[0].dtype"),
        (OpRequest.make(OpKind.AFFINE_GRID, [T((1, 2, 3))], [T((1, 2, 2, 2), DType.F64)], size=(1, 1, 2, 2)), UnsupportedDtypeError, "outputs[0].dtype"),
        (OpRequest.make(OpKind.AFFINE_GRID, [T((1, 2, 3)), T((4,), I64)], [T((1, 2, 2, 2))], size=(1, 1, 2, 2)), InvalidRequestError, "inputs"),
        (OpRequest.make(OpKind.COL2IM, [T((1, 4, 4))], [T((1, 1, 3, 3))], block_shape=(2, 2)), InvalidRequestError, "attrs.image_shape"),
        (OpRequest.make(OpKind.COL2IM, [T((1, 4, 4))], [T((1, 1, 3, 3))], image_shape=(3, 3), block_shape=(4,)), InvalidRequestError, "attrs.block_shape"),
        (OpRequest.make(OpKind.COL2IM, [T((1, 4, 4))], [T((1, 1, 3, 3))], image_shape=(3, 3), block_shape=(0, 2)), InvalidRequestError, "attrs.block_shape"),
        (OpRequest.make(OpKind.COL2IM, [T((1, 4, 4))], [T((1, 1, 3, 3))], image_shape=(3, 0), block_shape=(2, 2)), InvalidRequestError, "attrs.image_shape"),
        (OpRequest.make(OpKind.COL2IM, [T((1, 4, 4))], [T((1, 1, 3, 3))], image_shape=(3, 3), block_shape=(2, 2), strides=(1, 0)), InvalidRequestError, "attrs.strides"),
        (OpRequest.make(OpKind.COL2IM, [T((1, 4, 4))], [T((1, 1, 3, 3))], image_shape=(3, 3), block_shape=(2, 2), dilations=(1, 1, 1)), InvalidRequestError, "attrs.dilations"),
        (OpRequest.make(OpKind.COL2IM, [T((1, 4, 4))], [T((1, 1, 3, 3))], image_shape=(3, 3), block_shape=(2, 2), pads=(0, -1, 0, 0)), InvalidRequestError, "attrs.pads"),
        (OpRequest.make(OpKind.COL2IM, [T((1, 4, 5))], [T((1, 1, 3, 3))], image_shape=(3, 3), block_shape=(2, 2)), ShapeError, "inputs[0].shape"),
        (OpRequest.make(OpKind.COL2IM, [T((1, 6, 4))], [T((1, 1, 3, 3))], image_shape=(3, 3), block_shape=(2, 2)), ShapeError, "inputs[0].shape"),
        (OpRequest.make(OpKind.COL2IM, [T((1, 4, 4, 1))], [T((1, 1, 3, 3))], image_shape=(3, 3), block_shape=(2, 2)), ShapeError, "inputs[0].shape"),
        (OpRequest.make(OpKind.COL2IM, [T((1, 4, 4))], [T((1, 1, 3, 3))], image_shape=(3, 3), block_shape=(2, 4)), ShapeError, "attrs.block_shape"),
        (OpRequest.make(OpKind.COL2IM, [T((1, 4, 4))], [T((1, 2, 3, 3))], image_shape=(3, 3), block_shape=(2, 2)), ShapeError, "outputs[0].shape"),
        (OpRequest.make(OpKind.COL2IM, [T((1, 4, 4), I32)], [T((1, 1, 3, 3), I32)], image_shape=(3, 3), block_shape=(2, 2)), UnsupportedDtypeError, "inputs[0].dtype"),
        (OpRequest.make(OpKind.COL2IM, [T((1, 4, 4))], [T((1, 1, 3, 3), DType.F64)], image_shape=(3, 3), block_shape=(2, 2)), UnsupportedDtypeError, "outputs[0].dtype"),
        (OpRequest.make(OpKind.COL2IM, [T((1, 4, 4)), T((2,), I64)], [T((1, 1, 3, 3))], image_shape=(3, 3), block_shape=(2, 2)), InvalidRequestError, "inputs"),
        (OpRequest.make(OpKind.DEFORM_CONV, [T((1, 2, 5, 5)), T((3, 2, 3, 3)), T((1, 18, 3, 3))], [T((1, 3, 3, 3))], strides=(0, 1)), InvalidRequestError, "attrs.strides"),
        (OpRequest.make(OpKind.DEFORM_CONV, [T((1, 2, 5, 5)), T((3, 2, 3, 3)), T((1, 18, 3, 3))], [T((1, 3, 3, 3))], pads=(0, -1, 0, 0)), InvalidRequestError, "attrs.pads"),
        (OpRequest.make(OpKind.DEFORM_CONV, [T((1, 2, 5, 5)), T((3, 2, 3, 3)), T((1, 18, 3, 3))], [T((1, 3, 3, 3))], dilations=(1, 1, 1)), InvalidRequestError, "attrs.dilations"),
        (OpRequest.make(OpKind.DEFORM_CONV, [T((1, 2, 5, 5)), T((3, 2, 3, 3)), T((1, 18, 3, 3))], [T((1, 3, 3, 3))], group=0), InvalidRequestError, "attrs.group"),
        (OpRequest.make(OpKind.DEFORM_CONV, [T((1, 2, 5, 5)), T((3, 2, 3, 3)), T((1, 18, 3, 3))], [T((1, 3, 3, 3))], offset_group=0), InvalidRequestError, "attrs.offset_group"),
        (OpRequest.make(OpKind.DEFORM_CONV, [T((1, 2, 5, 5)), T((3, 2, 3, 3)), T((1, 18, 3, 3))], [T((1, 3, 3, 3))], offset_group=3), ShapeError, "attrs.offset_group"),
        (OpRequest.make(OpKind.DEFORM_CONV, [T((1, 2, 5, 5)), T((3, 1, 3, 3)), T((1, 18, 3, 3))], [T((1, 3, 3, 3))]), ShapeError, "inputs[1].shape"),
        (OpRequest.make(OpKind.DEFORM_CONV, [T((1, 2, 2, 2)), T((3, 2, 3, 3)), T((1, 18, 3, 3))], [T((1, 3, 3, 3))]), ShapeError, "inputs[1].shape"),
        (OpRequest.make(OpKind.DEFORM_CONV, [T((1, 2, 5, 5)), T((3, 2, 3, 3)), T((1, 16, 3, 3))], [T((1, 3, 3, 3))]), ShapeError, "inputs[2].shape"),
        (OpRequest.make(OpKind.DEFORM_CONV, [T((1, 2, 5, 5)), T((3, 2, 3, 3)), T((1, 18, 2, 3))], [T((1, 3, 3, 3))]), ShapeError, "inputs[2].shape"),
        (OpRequest.make(OpKind.DEFORM_CONV, [T((1, 2, 5, 5)), T((3, 2, 3, 3)), T((1, 18, 3, 3)), T((4,))], [T((1, 3, 3, 3))]), ShapeError, "inputs[3].shape"),
        (OpRequest.make(OpKind.DEFORM_CONV, [T((1, 2, 5, 5)), T((3, 2, 3, 3)), T((1, 18, 3, 3)), T((3,)), T((1, 8, 3, 3))], [T((1, 3, 3, 3))]), ShapeError, "inputs[4].shape"),
        (OpRequest.make(OpKind.DEFORM_CONV, [T((1, 2, 5)), T((3, 2, 3)), T((1, 6, 3))], [T((1, 3, 3))]), ShapeError, "inputs[0].shape"),
        (OpRequest.make(OpKind.DEFORM_CONV, [T((1, 2, 5, 5)), T((3, 2, 3, 3)), T((1, 18, 3, 3))], [T((1, 3, 4, 4))]), ShapeError, "outputs[0].shape"),
        (OpRequest.make(OpKind.DEFORM_CONV, [T((1, 2, 5, 5), I32), T((3, 2, 3, 3), I32), T((1, 18, 3, 3), I32)], [T((1, 3, 3, 3), I32)]), UnsupportedDtypeError, "inputs[0].dtype"),
        (OpRequest.make(OpKind.DEFORM_CONV, [T((1, 2, 5, 5)), T((3, 2, 3, 3)), T((1, 18, 3, 3), DType.F64)], [T((1, 3, 3, 3))]), UnsupportedDtypeError, "inputs[2].dtype"),
        (OpRequest.make(OpKind.DEFORM_CONV, [T((1, 2, 5, 5)), T((3, 2, 3, 3)), T((1, 18, 3, 3))], [T((1, 3, 3, 3), DType.F64)]), UnsupportedDtypeError, "outputs[0].dtype"),
        (OpRequest.make(OpKind.DEFORM_CONV, [T((1, 2, 5, 5)), T((3, 2, 3, 3))], [T((1, 3, 3, 3))]), InvalidRequestError, "inputs"),
        (OpRequest.make(OpKind.DEFORM_CONV, [T((1, 2, 5, 5)), T((3, 2, 3, 3)), T((1, 18, 3, 3)), T((3,)), T((1, 9, 3, 3)), T((3,))], [T((1, 3, 3, 3))]), InvalidRequestError, "inputs"),
        (OpRequest.make(OpKind.MAXUNPOOL, [T((1, 3, 2)), T((1, 3, 2), I64)], [T((1, 3, 5))], kernel_shape=(2,), strides=(2,), output_shape=(1, 3)), InvalidRequestError, "attrs.output_shape"),
        (OpRequest.make(OpKind.MAXUNPOOL, [T((1, 3, 2)), T((1, 3, 2), I64)], [T((1, 3, 5))], kernel_shape=(2,), strides=(2,)), ShapeError, "outputs[0].shape"),
        (OpRequest.make(OpKind.SOFTMAX, [T((4, 10))], [T((4, 10))], axis=2), InvalidRequestError, "attrs.axis"),
        (OpRequest.make(OpKind.SOFTMAX, [T((4, 10))], [T((4, 10))], axis="x"), InvalidRequestError, "attrs.axis"),
        (OpRequest.make(OpKind.BATCHNORM, [T((2, 3, 4, 4)), T((4,)), T((3,)), T((3,)), T((3,))], [T((2, 3, 4, 4))]), ShapeError, "inputs[1].shape"),
        (OpRequest.make(OpKind.ADD, [T((4, 3)), T((4,))], [T((4, 3))]), ShapeError, "inputs[1].shape"),
        (OpRequest.make(OpKind.ADD, [T((4,)), T((4,), I32)], [T((4,))]), UnsupportedDtypeError, "inputs[1].dtype"),
        (OpRequest.make(OpKind.QUANTIZE, [T((2, 4)), T((3,))], [T((2, 4), I8)]), ShapeError, "inputs[1].shape"),
        (OpRequest.make(OpKind.QUANTIZE, [T((2, 4)), T(())], [T((2, 4))]), UnsupportedDtypeError, "outputs[0].dtype"),
        (OpRequest.make(OpKind.DYNAMIC_QUANTIZE_LINEAR, [T((2, 4))], [T((2, 4), U8), T((1,)), T((), U8)]), ShapeError, "outputs[1].shape"),
        (OpRequest.make(OpKind.TRANSPOSE, [T((2, 3))], [T((3, 2))], perm=(0, 0)), InvalidRequestError, "attrs.perm"),
        (OpRequest.make(OpKind.CONCAT, [T((2, 3)), T((3, 3))], [T((5, 3))], axis=1), ShapeError, "inputs[1].shape"),
        (OpRequest.make(OpKind.COPY, [T((2, 3))], [T((7,))]), ShapeError, "outputs[0].shape"),
        (OpRequest.make(OpKind.MATMUL_INTEGER, [T((4, 8), I8), T((8, 3), I8)], [T((4, 3))]), UnsupportedDtypeError, "outputs[0].dtype"),
        (OpRequest.make(OpKind.UNARY, [T((3,))], [T((3,))], fn="Nope"), InvalidRequestError, "attrs.fn"),
        (OpRequest.make(OpKind.UNARY, [T((3,), I32)], [T((3,), I32)], fn="Exp"), UnsupportedDtypeError, "inputs[0].dtype"),
        (OpRequest.make(OpKind.BINARY, [T((3,)), T((3,))], [T((3,))], fn="Equal"), UnsupportedDtypeError, "outputs[0].dtype"),
        (OpRequest.make(OpKind.BINARY, [T((3,)), T((3,), I32)], [T((3,))], fn="Max"), UnsupportedDtypeError, "inputs[1].dtype"),
        (OpRequest.make(OpKind.WHERE, [T((3,)), T((3,)), T((3,))], [T((3,))]), UnsupportedDtypeError, "inputs[0].dtype"),
        (OpRequest.make(OpKind.REDUCE, [T((2, 3))], [T((2,))], fn="ReduceSum", axes=(2,), keepdims=0), InvalidRequestError, "attrs.axes"),
        (OpRequest.make(OpKind.REDUCE, [T((2, 3))], [T((3,))], fn="ReduceSum", axes=(1,), keepdims=0), ShapeError, "outputs[0].shape"),
        (OpRequest.make(OpKind.GATHER, [T((5, 3)), T((2,))], [T((2, 3))]), UnsupportedDtypeError, "inputs[1].dtype"),
        (OpRequest.make(OpKind.SCATTER_ND, [T((5, 3)), T((2, 1))], [T((5, 3))]), InvalidRequestError, "inputs"),
        (OpRequest.make(OpKind.SCATTER_ND, [T((5, 3)), T((2, 1)), T((2, 3))], [T((5, 3))]), UnsupportedDtypeError, "inputs[1].dtype"),
        (OpRequest.make(OpKind.SCATTER_ND, [T((5, 3)), T((2, 1), I64), T((2, 3), I32)], [T((5, 3))]), UnsupportedDtypeError, "inputs[2].dtype"),
        (OpRequest.make(OpKind.SCATTER_ND, [T((5, 3)), T((2, 1), I64), T((2, 3))], [T((5, 3))], reduction="sum"), InvalidRequestError, "attrs.reduction"),
        (OpRequest.make(OpKind.SCATTER_ND, [T((5, 3)), T((2, 3), I64), T((2,))], [T((5, 3))]), ShapeError, "inputs[1].shape"),
        (OpRequest.make(OpKind.SCATTER_ND, [T((5, 3)), T((2, 1), I64), T((2, 2))], [T((5, 3))]), ShapeError, "inputs[2].shape"),
        (OpRequest.make(OpKind.SCATTER_ND, [T((5, 3)), T((2, 1), I64), T((2, 3))], [T((3, 5))]), ShapeError, "outputs[0].shape"),
        (OpRequest.make(OpKind.SCATTER_ELEMENTS, [T((5, 3)), T((2, 4), I64), T((2, 4))], [T((5, 3))]), ShapeError, "inputs[1].shape"),
        (OpRequest.make(OpKind.SCATTER_ELEMENTS, [T((5, 3)), T((2, 3), I64), T((2, 2))], [T((5, 3))]), ShapeError, "inputs[2].shape"),
        (OpRequest.make(OpKind.REVERSE_SEQUENCE, [T((4, 3)), T((3,), I64)], [T((4, 3))], time_axis=1, batch_axis=1), InvalidRequestError, "attrs.batch_axis"),
        (OpRequest.make(OpKind.REVERSE_SEQUENCE, [T((4, 3, 2)), T((3,), I64)], [T((4, 3, 2))], time_axis=2), InvalidRequestError, "attrs.time_axis"),
        (OpRequest.make(OpKind.REVERSE_SEQUENCE, [T((4, 3)), T((3,))], [T((4, 3))]), UnsupportedDtypeError, "inputs[1].dtype"),
        (OpRequest.make(OpKind.REVERSE_SEQUENCE, [T((4, 3)), T((4,), I64)], [T((4, 3))]), ShapeError, "inputs[1].shape"),
        (OpRequest.make(OpKind.REVERSE_SEQUENCE, [T((4,)), T((1,), I64)], [T((4,))], batch_axis=0, time_axis=1), ShapeError, "inputs[0].shape"),
        (OpRequest.make(OpKind.REVERSE_SEQUENCE, [T((4, 3))], [T((4, 3))]), InvalidRequestError, "inputs"),
        (OpRequest.make(OpKind.TENSOR_SCATTER, [T((2, 4, 3)), T((2, 4, 3))], [T((2, 4, 3))], axis=0), InvalidRequestError, "attrs.axis"),
        (OpRequest.make(OpKind.TENSOR_SCATTER, [T((2, 4, 3)), T((2, 4, 3))], [T((2, 4, 3))], axis=3), InvalidRequestError, "attrs.axis"),
        (OpRequest.make(OpKind.TENSOR_SCATTER, [T((2, 4, 3)), T((2, 1, 3))], [T((2, 4, 3))], mode="ring"), InvalidRequestError, "attrs.mode"),
        (OpRequest.make(OpKind.TENSOR_SCATTER, [T((2, 4, 3)), T((2, 1, 3)), T((2,))], [T((2, 4, 3))]), UnsupportedDtypeError, "inputs[2].dtype"),
        (OpRequest.make(OpKind.TENSOR_SCATTER, [T((2, 4, 3)), T((2, 1, 3), I32)], [T((2, 4, 3))]), UnsupportedDtypeError, "inputs[1].dtype"),
        (OpRequest.make(OpKind.TENSOR_SCATTER, [T((2, 4, 3)), T((2, 5, 3))], [T((2, 4, 3))]), ShapeError, "inputs[1].shape"),
        (OpRequest.make(OpKind.TENSOR_SCATTER, [T((2, 4, 3)), T((2, 1, 2))], [T((2, 4, 3))]), ShapeError, "inputs[1].shape"),
        (OpRequest.make(OpKind.TENSOR_SCATTER, [T((2, 4, 3)), T((2, 1, 3)), T((3,), I64)], [T((2, 4, 3))]), ShapeError, "inputs[2].shape"),
        (OpRequest.make(OpKind.TENSOR_SCATTER, [T((2, 4, 3))], [T((2, 4, 3))]), InvalidRequestError, "inputs"),
        (OpRequest.make(OpKind.SLICE, [T((5, 4))], [T((5, 4))], starts=(0,), ends=(5,), steps=(1,)), InvalidRequestError, "attrs.starts"),
        (OpRequest.make(OpKind.PAD, [T((2, 3))], [T((2, 3))], mode="mirror", pads=(0, 0, 0, 0)), InvalidRequestError, "attrs.mode"),
        (OpRequest.make(OpKind.CENTER_CROP_PAD, [T((2, 3))], [T((2, 3))]), InvalidRequestError, "attrs.shape"),
        (OpRequest.make(OpKind.CENTER_CROP_PAD, [T((2, 3))], [T((2, 2))], shape=(2, 4)), ShapeError, "outputs[0].shape"),
        (OpRequest.make(OpKind.EXPAND, [T((3, 2))], [T((3, 4))]), ShapeError, "outputs[0].shape"),
        (OpRequest.make(OpKind.TOPK, [T((2, 5))], [T((2, 6)), T((2, 6), I64)], axis=1), ShapeError, "outputs[0].shape"),
    ],
)  # fmt: skip
def test_bad_requests_name_the_field(req: OpRequest, err: type, field: str) -> None:
    with pytest.raises(err) as info:
        Pipeline().compile(req)
    assert info.value.field == field


@pytest.mark.parametrize(
    ("req", "err", "field", "message"),
    [
        (OpRequest.make(OpKind.CENTER_CROP_PAD, [T((5, 6))], [T((3, 9))]), InvalidRequestError, "attrs.shape", "attribute shape is required"),
        (OpRequest.make(OpKind.CENTER_CROP_PAD, [T((5, 6))], [T((3, 9))], shape=(3,)), InvalidRequestError, "attrs.shape", "attribute shape needs 2 values, got 1"),
        (OpRequest.make(OpKind.CENTER_CROP_PAD, [T((5, 6))], [T((3, 9))], shape=(3.0, 9.0)), InvalidRequestError, "attrs.shape", "attribute shape must be ints"),
        (OpRequest.make(OpKind.CENTER_CROP_PAD, [T((5, 6))], [T((3, 9))], shape=(3, -1)), InvalidRequestError, "attrs.shape", "shape must be >= 0"),
        (OpRequest.make(OpKind.CENTER_CROP_PAD, [T((5, 6))], [T((3, 8))], shape=(3, 9)), ShapeError, "outputs[0].shape", "CENTER_CROP_PAD output shape is (3, 9), request says (3, 8)"),
        (OpRequest.make(OpKind.CENTER_CROP_PAD, [T((5, 6))], [T((3, 9), I64)], shape=(3, 9)), UnsupportedDtypeError, "outputs[0].dtype", "outputs[0] is I64, expected F32"),
        (OpRequest.make(OpKind.CENTER_CROP_PAD, [T((5, 6)), T((2,), I64)], [T((3, 9))], shape=(3, 9)), InvalidRequestError, "inputs", "CENTER_CROP_PAD takes 1 inputs, got 2"),
    ],
    ids=["no shape", "short shape", "float shape", "negative size", "output shape", "output dtype", "two inputs"],
)  # fmt: skip
def test_bad_center_crop_pad_requests_are_typed_errors_naming_the_field(
    req: OpRequest, err: type, field: str, message: str
) -> None:
    text = refused(req, err, field)
    assert message in text, text


def test_an_nhwc_center_crop_pad_is_taken_in_the_stored_order_as_pad() -> None:
    """No layout conversion around the kernel: shape is per axis of the stored descriptors."""
    x, y = T((1, 6, 6, 3), layout=Layout.NHWC), T((1, 4, 8, 3), layout=Layout.NHWC)
    prog = Pipeline().compile(OpRequest.make(OpKind.CENTER_CROP_PAD, [x], [y], shape=(1, 4, 8, 3)))
    assert prog.scratch == ()
    (blob,) = [decode(b) for b in prog.patch((x.addr, y.addr))]
    assert blob.kernel_id is KernelId.CENTER_CROP_PAD and blob.ints == ()
    assert [p.shape for p in blob.params] == [(1, 6, 6, 3), (1, 4, 8, 3)]


DQL = OpKind.DYNAMIC_QUANTIZE_LINEAR
DQL_OUTS = [T((2, 4), U8), T(()), T((), U8)]


@pytest.mark.parametrize(
    ("req", "err", "field", "words"),
    [
        (OpRequest.make(DQL, [T((2, 4), DType.F64)], DQL_OUTS), UnsupportedDtypeError, "inputs[0].dtype", ("DYNAMIC_QUANTIZE_LINEAR does not take F64", "supported: F32")),
        (OpRequest.make(DQL, [T((2, 4), I32)], DQL_OUTS), UnsupportedDtypeError, "inputs[0].dtype", ("does not take I32",)),
        (OpRequest.make(DQL, [T((2, 4))], [T((2, 4), I8), T(()), T((), U8)]), UnsupportedDtypeError, "outputs[0].dtype", ("writes y as U8, not I8",)),
        (OpRequest.make(DQL, [T((2, 4))], [T((2, 4), U8), T((), DType.F16), T((), U8)]), UnsupportedDtypeError, "outputs[1].dtype", ("writes y_scale as F32, not F16",)),
        (OpRequest.make(DQL, [T((2, 4))], [T((2, 4), U8), T(()), T((), I32)]), UnsupportedDtypeError, "outputs[2].dtype", ("writes y_zero_point as U8, not I32",)),
        (OpRequest.make(DQL, [T((2, 4)), T(())], DQL_OUTS), InvalidRequestError, "inputs", ("takes 1 inputs, got 2",)),
        (OpRequest.make(DQL, [T((2, 4))], DQL_OUTS[:2]), InvalidRequestError, "outputs", ("takes 3 outputs, got 2",)),
        (OpRequest.make(DQL, [T((2, 4))], [T((4, 2), U8), T(()), T((), U8)]), ShapeError, "outputs[0].shape", ("output shape is (2, 4), request says (4, 2)",)),
        (OpRequest.make(DQL, [T((2, 4))], [T((2, 4), U8), T(()), T((1,), U8)]), ShapeError, "outputs[2].shape", ("output shape is (), request says (1,)",)),
    ],
    ids=["x F64", "x I32", "y I8", "y_scale F16", "y_zero_point I32", "two inputs", "two outputs",
         "y shape", "y_zero_point shape"],
)  # fmt: skip
def test_a_bad_dynamic_quantize_linear_names_the_field_and_the_fault(
    req: OpRequest, err: type, field: str, words: tuple[str, ...]
) -> None:
    """x must be F32; y, y_scale and y_zero_point U8, F32 and U8, y of x's shape and the other
    two scalars: each refusal is typed and names the request field it is about."""
    text = refused(req, err, field)
    assert all(w in text for w in words), text


def test_dynamic_quantize_linear_writes_its_three_outputs_in_order() -> None:
    """One blob: x, then y, y_scale and y_zero_point at their own addresses, of their dtypes."""
    x, outs = T((3, 5)), [T((3, 5), U8), T(()), T((), U8)]
    prog = Pipeline().compile(OpRequest.make(DQL, [x], outs))
    assert prog.scratch == () and prog.nbytes == (60, 15, 4, 1)
    (blob,) = [decode(b) for b in prog.patch((x.addr, *(o.addr for o in outs)))]
    assert [p.addr for p in blob.params] == [x.addr, *(o.addr for o in outs)]
    assert [p.dtype for p in blob.params] == [F, U8, F, U8]
    assert [p.shape for p in blob.params] == [(3, 5), (3, 5), (), ()]
