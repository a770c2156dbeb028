"""The IR records and the verifier's rules, including the shape-mismatch report."""

from __future__ import annotations

import numpy as np
import pytest

from stack.compiler import (
    ElemType,
    Graph,
    Node,
    OpType,
    ShapeMismatchError,
    TensorType,
    VerifyError,
    verify,
)
from stack.compiler.options import CompileOptions
from stack.compiler.passes import run_passes


def _graph(nodes, types=None, consts=None) -> Graph:
    t = {"x": TensorType(ElemType.F32, (2, 3))}
    t.update(types or {})
    return Graph("g", tuple(nodes), ("x",), (nodes[-1].outputs[0],), t, consts or {})


def test_node_attrs_are_normalised_and_sorted() -> None:
    node = Node.make("n", OpType.CONV, ["x", "w"], ["y"], strides=[1, 1], relu=True, group=1)
    assert node.attrs == (("group", 1), ("relu", 1), ("strides", (1, 1)))
    assert node.with_attrs(relu=None).attr("relu") is None


def test_unknown_element_type_lists_known() -> None:
    with pytest.raises(ValueError, match="float32"):
        ElemType.from_numpy(np.complex64)


def test_use_before_definition_is_refused() -> None:
    g = _graph([Node.make("a", OpType.RELU, ["nowhere"], ["y"])])
    with pytest.raises(VerifyError) as err:
        verify(g)
    assert err.value.details["check"] == "defined-before-use"
    assert err.value.node == "a"


def test_double_write_and_arity_are_refused() -> None:
    relu = Node.make("a", OpType.RELU, ["x"], ["y"])
    with pytest.raises(VerifyError, match="written twice"):
        verify(_graph([relu, Node.make("b", OpType.RELU, ["x"], ["y"])]))
    with pytest.raises(VerifyError) as err:
        verify(_graph([Node.make("c", OpType.MATMUL, ["x"], ["y"])]))
    assert err.value.details["check"] == "arity"


def test_shape_mismatch_report_names_each_dimension() -> None:
    node = Node.make("t", OpType.TRANSPOSE, ["x"], ["y"], perm=(1, 0))
    g = _graph([node], {"y": TensorType(ElemType.F32, (2, 3))})
    with pytest.raises(ShapeMismatchError) as err:
        verify(g, typed=True)
    msg = str(err.value)
    assert "dim 0: 2 != 3" in msg and "dim 1: 3 != 2" in msg
    assert err.value.details["expected"] == "float32[2, 3]"
    assert err.value.details["got"] == "float32[3, 2]"


def test_pipeline_output_passes_the_typed_verifier() -> None:
    w = np.ones((3, 4), np.float32)
    nodes = [
        Node.make("m", OpType.MATMUL, ["x", "w"], ["h"]),
        Node.make("r", OpType.RELU, ["h"], ["y"]),
    ]
    g = Graph("g", tuple(nodes), ("x",), ("y",), {"x": TensorType(ElemType.F32, (2, 3))}, {"w": w})
    out, records = run_passes(g, ("infer_shapes", "fuse", "dce"), CompileOptions())
    verify(out, typed=True)
    assert [r.name for r in records] == ["infer_shapes", "fuse", "dce"]
    assert out.types["y"] == TensorType(ElemType.F32, (2, 4))
