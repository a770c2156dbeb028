"""Executable emission: format round trip, const alignment, aliases, COPYs, typed refusals."""

from __future__ import annotations

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from stack.adapter import import_model
from stack.compiler import UnsupportedDTypeError, compile_graph
from stack.runtime import CONST_ALIGNMENT, ExecLayout, ExecOp, Executable, Segment, TensorRole


def test_round_trip_through_bytes(mk) -> None:
    nodes = [
        helper.make_node("Gemm", ["x", "w", "b"], ["h"], transB=1),
        helper.make_node("Relu", ["h"], ["y"]),
    ]
    g = mk.graph_of(nodes, [("x", [2, 5])], [("y", None)], {"w": mk.rand(3, 5), "b": mk.rand(3)})
    exe = compile_graph(g).executable
    again = Executable.from_bytes(exe.to_bytes())
    assert again == exe
    assert [op.op for op in exe.ops] == [ExecOp.GEMM]
    assert dict(exe.ops[0].attrs)["relu"] == 1
    for t in exe.tensors:
        if t.segment is Segment.CONST:
            assert t.offset % CONST_ALIGNMENT == 0
    w = exe.tensor("w")
    raw = np.frombuffer(exe.consts[w.offset : w.offset + w.nbytes], np.float32).reshape(3, 5)
    np.testing.assert_array_equal(raw, g.constants["w"])


def test_views_alias_in_the_arena_and_copy_at_the_io_boundary(mk) -> None:
    nodes = [
        helper.make_node("Flatten", ["x"], ["xf"]),  # reads a model input: COPY
        helper.make_node("Relu", ["xf"], ["r"]),
        helper.make_node("Reshape", ["r", "s"], ["rr"]),  # arena -> arena: alias
        helper.make_node("Relu", ["rr"], ["y"]),
        helper.make_node("Reshape", ["r", "s"], ["z"]),  # writes a model output: COPY
    ]
    g = mk.graph_of(
        nodes, [("x", [2, 3, 4])], [("y", None), ("z", None)], {"s": np.array([4, 6], np.int64)}
    )
    exe = compile_graph(g).executable
    ops = [op.op for op in exe.ops]
    assert ops.count(ExecOp.COPY) == 2 and ops.count(ExecOp.RELU) == 2
    r, rr = exe.tensor("r"), exe.tensor("rr")
    assert (rr.offset, rr.lane, rr.segment) == (r.offset, r.lane, Segment.ARENA)
    assert exe.tensor("z").role is TensorRole.OUTPUT


def test_a_constant_output_is_copied_from_the_const_segment(mk) -> None:
    node = helper.make_node(
        "Constant", [], ["y"], value=onnx.numpy_helper.from_array(np.arange(6, dtype=np.float32))
    )
    g = mk.graph_of([node], [], [("y", None)])
    exe = compile_graph(g).executable
    assert [op.op for op in exe.ops] == [ExecOp.COPY]
    src = exe.tensors[exe.ops[0].inputs[0]]
    assert src.role is TensorRole.CONST and exe.tensor("y").role is TensorRole.OUTPUT


def test_dtype_without_device_type_names_the_layers() -> None:
    ins = [helper.make_tensor_value_info(n, TensorProto.UINT16, [3]) for n in "ab"]
    out = [helper.make_tensor_value_info("y", TensorProto.UINT16, [3])]
    model = helper.make_model(
        helper.make_graph([helper.make_node("Add", ["a", "b"], ["y"])], "g", ins, out),
        opset_imports=[helper.make_opsetid("", 17)],
    )
    with pytest.raises(UnsupportedDTypeError) as err:
        compile_graph(import_model(model))
    assert err.value.details["dtype"] == "uint16"
    assert err.value.details["layers"] == ["compiler", "umd", "kmd"]


def test_layouts_are_in_the_op_records_and_plan_figures_in_metadata(mk) -> None:
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]), helper.make_node("Relu", ["c"], ["y"])]
    g = mk.graph_of(nodes, [("x", [1, 2, 5, 5])], [("y", None)], {"w": mk.rand(3, 2, 3, 3)})
    exe = compile_graph(g).executable
    meta = dict(exe.metadata)
    assert [(op.op, op.layout) for op in exe.ops] == [
        (ExecOp.TRANSPOSE, ExecLayout.NCHW),  # x into NHWC
        (ExecOp.CONV2D, ExecLayout.NHWC),  # the Relu fused into it
        (ExecOp.TRANSPOSE, ExecLayout.NCHW),  # y back to NCHW
    ]
    assert "layouts" not in meta
    assert int(meta["naive_bytes"]) >= 0 and meta["producer"] == "refstack-compiler"
