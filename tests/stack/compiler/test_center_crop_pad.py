"""The IR CenterCropPad below the importer: its shape and dtype rule (typed errors naming the
node for what the adapter would have refused), its lowering onto Executable op 51 with the
resolved target, its arity, and the op it compiles to."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from stack.compiler import (
    ElemType,
    Graph,
    Node,
    OpType,
    ShapeInferenceError,
    TensorType,
    VerifyError,
    compile_graph,
    rule_for,
    verify,
)
from stack.compiler.lowering import lower_node
from stack.compiler.verify import ARITY
from stack.runtime import ExecOp

X = TensorType(ElemType.F32, (4, 5, 6))


def _node(**attrs: Any) -> Node:
    return Node.make("ccp", OpType.CENTER_CROP_PAD, ["x"], ["y"], **{"shape": (2, 5, 9), **attrs})


def test_the_rule_gives_the_target_shape_of_the_input_dtype() -> None:
    for dtype in (ElemType.F32, ElemType.F16, ElemType.I64, ElemType.BOOL):
        (y,) = rule_for(OpType.CENTER_CROP_PAD)(_node(), [TensorType(dtype, X.shape)], {})
        assert y == TensorType(dtype, (2, 5, 9))
    (y,) = rule_for(OpType.CENTER_CROP_PAD)(_node(shape=(0, 1, 6)), [X], {})
    assert y == TensorType(ElemType.F32, (0, 1, 6))
    scalar = TensorType(ElemType.F64, ())
    assert rule_for(OpType.CENTER_CROP_PAD)(_node(shape=()), [scalar], {}) == [scalar]


@pytest.mark.parametrize(
    ("attrs", "message"),
    [
        ({"shape": None}, "shape [] must be one size >= 0 per axis of float32[4, 5, 6]"),
        ({"shape": (2, 5)}, "shape [2, 5] must be one size >= 0 per axis"),
        ({"shape": (2, 5, 9, 1)}, "shape [2, 5, 9, 1] must be one size >= 0 per axis"),
        ({"shape": (2, -1, 9)}, "shape [2, -1, 9] must be one size >= 0 per axis"),
    ],
    ids=["no shape", "short", "long", "negative"],
)
def test_a_bad_center_crop_pad_is_a_typed_error_naming_the_node(attrs: dict, message: str) -> None:
    with pytest.raises(ShapeInferenceError) as err:
        rule_for(OpType.CENTER_CROP_PAD)(_node(**attrs), [X], {})
    assert type(err.value) is ShapeInferenceError
    assert err.value.node == "ccp" and err.value.op == "CenterCropPad"
    assert message in str(err.value)


def test_center_crop_pad_lowers_to_op_51_with_its_shape() -> None:
    op, attrs = lower_node(_node())
    assert op is ExecOp.CENTER_CROP_PAD == 51
    assert dict(attrs) == {"shape": (2, 5, 9)}
    assert (ARITY[OpType.CENTER_CROP_PAD].min_in, ARITY[OpType.CENTER_CROP_PAD].max_in) == (1, 1)


def _graph(node: Node) -> Graph:
    return Graph("g", (node,), ("x",), ("y",), {"x": X, "y": TensorType(X.dtype, (2, 5, 9))}, {})


def test_a_second_input_breaks_the_arity() -> None:
    node = Node.make("ccp", OpType.CENTER_CROP_PAD, ["x", "x"], ["y"], shape=(2, 5, 9))
    with pytest.raises(VerifyError, match=r"2 inputs, expected 1\.\.1") as err:
        verify(_graph(node))
    assert err.value.details["check"] == "arity" and err.value.node == "ccp"


def test_the_graph_compiles_to_one_center_crop_pad_op() -> None:
    exe = compile_graph(_graph(_node())).executable
    assert [op.op for op in exe.ops] == [ExecOp.CENTER_CROP_PAD]
    assert dict(exe.ops[0].attrs) == {"shape": (2, 5, 9)}
    y = exe.tensor("y")
    assert y.shape == (2, 5, 9) and y.dtype.numpy == np.float32
