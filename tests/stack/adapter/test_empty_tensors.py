"""Tensors of zero elements through the whole stack against onnxruntime: as run-time model
inputs (also next to non-empty ones, in either order), as intermediates and as outputs.

A zero-element input once shared its IO address with the next input, so copying the inputs in
failed with an untyped ValueError (the executor keys its IO views by address); a Conv of a
batch of 0 failed in its kernel. Every case compares shape, dtype and values exactly."""

from __future__ import annotations

import itertools

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from stack.adapter import import_model
from stack.compiler import CompiledModel, compile_graph
from stack.compiler.jit import shared_runtime
from stack.runtime import Segment

ELEM = {np.float32: TensorProto.FLOAT, np.float16: TensorProto.FLOAT16,
        np.float64: TensorProto.DOUBLE, np.int64: TensorProto.INT64,
        np.int32: TensorProto.INT32, np.int8: TensorProto.INT8, np.uint8: TensorProto.UINT8,
        np.bool_: TensorProto.BOOL}  # fmt: skip
N = helper.make_node


def _model(
    nodes: list[onnx.NodeProto],
    feeds: dict[str, np.ndarray],
    outputs: tuple[str, ...] = ("y",),
    consts: dict[str, np.ndarray] | None = None,
) -> onnx.ModelProto:
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info(n, ELEM[a.dtype.type], a.shape) for n, a in feeds.items()],
        [helper.make_empty_tensor_value_info(o) for o in outputs],
        [numpy_helper.from_array(a, n) for n, a in (consts or {}).items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _check(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Run ``model`` through onnxruntime and the stack; assert every output identical."""
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o.name for o in model.graph.output]
    ref = dict(zip(names, sess.run(None, feeds), strict=True))
    compiled = CompiledModel(import_model(model), runtime=shared_runtime())
    try:
        got = compiled.run(feeds)
    finally:
        compiled.close()
    assert sorted(got) == sorted(names)
    for name in names:
        want = np.asarray(ref[name])
        assert (got[name].shape, got[name].dtype) == (want.shape, want.dtype), name
        np.testing.assert_array_equal(got[name], want, err_msg=name)
    return got


def _full(shape: tuple[int, ...], dtype: type) -> np.ndarray:
    """Distinct small values (1..7 repeating) of ``dtype``; True/False for bool."""
    values = np.arange(int(np.prod(shape)), dtype=np.int64) % 7 + 1
    return (values % 2 == 0 if dtype is np.bool_ else values.astype(dtype)).reshape(shape)


DTYPES = [np.float32, np.float16, np.float64, np.int64, np.int32, np.int8, np.uint8, np.bool_]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("empty_first", [True, False])
def test_concat_with_an_empty_runtime_input(dtype: type, empty_first: bool) -> None:
    empty, full = np.zeros((0, 3), dtype), _full((2, 3), dtype)
    feeds = {"a": empty, "b": full} if empty_first else {"a": full, "b": empty}
    got = _check(_model([N("Concat", ["a", "b"], ["y"], axis=0)], feeds), feeds)
    np.testing.assert_array_equal(got["y"], full)


def test_every_io_tensor_has_an_address_of_its_own() -> None:
    feeds = {"a": np.zeros((0, 3), np.float32), "b": np.zeros((0, 3), np.float32),
             "c": _full((2, 3), np.float32)}  # fmt: skip
    model = _model([N("Concat", ["a", "b", "c"], ["y"], axis=0)], feeds)
    exe = compile_graph(import_model(model)).executable
    io = sorted((t.offset, t.offset + t.size) for t in exe.tensors if t.segment is Segment.IO)
    assert len(io) == 4 and all(end > start for start, end in io)
    assert all(prev_end <= start for (_, prev_end), (start, _) in itertools.pairwise(io))
    _check(model, feeds)


def test_concat_of_several_empty_inputs_along_the_other_axis() -> None:
    feeds = {"a": np.zeros((2, 0), np.float32), "b": _full((2, 3), np.float32),
             "c": np.zeros((2, 0), np.float32)}  # fmt: skip
    _check(_model([N("Concat", ["a", "b", "c"], ["y"], axis=1)], feeds), feeds)
    only = {"a": np.zeros((0, 3), np.int64), "b": np.zeros((0, 3), np.int64)}
    got = _check(_model([N("Concat", ["a", "b"], ["y"], axis=0)], only), only)
    assert got["y"].shape == (0, 3)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int64, np.int32])
@pytest.mark.parametrize("other", [(1, 3), (0, 3), (3,)])
def test_add_of_an_empty_input(dtype: type, other: tuple[int, ...]) -> None:
    feeds = {"a": np.zeros((0, 3), dtype), "b": _full(other, dtype)}
    got = _check(_model([N("Add", ["a", "b"], ["y"])], feeds), feeds)
    assert got["y"].shape == (0, 3)


def test_empty_intermediates_and_an_empty_output_next_to_a_full_one() -> None:
    feeds = {"a": np.zeros((0, 3), np.float32), "b": _full((1, 3), np.float32),
             "c": _full((2, 3), np.float32)}  # fmt: skip
    nodes = [
        N("Add", ["a", "b"], ["t"]),  # (0, 3) in the arena
        N("Mul", ["t", "t"], ["u"]),
        N("Sigmoid", ["u"], ["e"]),  # an empty model output
        N("Concat", ["u", "c", "u"], ["y"], axis=0),
        N("Relu", ["c"], ["z"]),
    ]
    got = _check(_model(nodes, feeds, ("y", "e", "z")), feeds)
    assert (got["y"].shape, got["e"].shape, got["z"].shape) == ((2, 3), (0, 3), (2, 3))


CONV_W, CONV_B = _full((2, 1, 3, 3), np.float32) - 4, _full((2,), np.float32)
DECONV_W = _full((1, 2, 3, 3), np.float32)
SPATIAL = {
    "conv": (N("Conv", ["x", "w", "b"], ["y"], pads=[1, 1, 1, 1]), {"w": CONV_W, "b": CONV_B}),
    "conv strided": (N("Conv", ["x", "w"], ["y"], strides=[2, 2]), {"w": CONV_W}),
    "conv transpose": (N("ConvTranspose", ["x", "w"], ["y"]), {"w": DECONV_W}),
    "max pool": (N("MaxPool", ["x"], ["y"], kernel_shape=[2, 2]), {}),
    "average pool": (N("AveragePool", ["x"], ["y"], kernel_shape=[2, 2], strides=[2, 2]), {}),
    "global average pool": (N("GlobalAveragePool", ["x"], ["y"]), {}),
}  # fmt: skip


@pytest.mark.parametrize("case", list(SPATIAL))
def test_spatial_ops_on_a_batch_of_zero(case: str) -> None:
    node, consts = SPATIAL[case]
    feeds = {"x": np.zeros((0, 1, 5, 5), np.float32)}
    got = _check(_model([node], feeds, consts=consts), feeds)
    assert got["y"].shape[0] == 0
    full = {"x": _full((2, 1, 5, 5), np.float32)}  # the same model on a real batch still agrees
    _check(_model([node], full, consts=consts), full)


@pytest.mark.parametrize(
    ("a", "b"), [((0, 3), (3, 4)), ((2, 0), (0, 4)), ((2, 3), (3, 0)), ((0, 2, 3), (3, 4))]
)
def test_matmul_with_an_empty_operand(a: tuple[int, ...], b: tuple[int, ...]) -> None:
    feeds = {"a": _full(a, np.float32), "b": _full(b, np.float32)}
    got = _check(_model([N("MatMul", ["a", "b"], ["y"])], feeds), feeds)
    if a == (2, 0):  # a sum of no products: zeros of the full output shape
        np.testing.assert_array_equal(got["y"], np.zeros((2, 4), np.float32))
