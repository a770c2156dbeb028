"""The IR Col2Im below the importer: its shape and dtype rule (typed errors naming the node for
what the adapter would have refused), its lowering onto Executable op 48 and its arity."""

from __future__ import annotations

from typing import Any

import pytest

from stack.compiler import ElemType, Node, OpType, ShapeInferenceError, TensorType, rule_for
from stack.compiler.lowering import lower_node
from stack.compiler.verify import ARITY
from stack.runtime import ExecOp

GOOD = {"image_shape": (5, 7), "block_shape": (2, 3), "dilations": (2, 1), "pads": (1, 0, 0, 1),
        "strides": (1, 2)}  # fmt: skip
#: C 3 times the 6 block elements; 4 x 3 places: (5 + 1 - 3) // 1 + 1 and (7 + 1 - 3) // 2 + 1
X = TensorType(ElemType.F32, (2, 3 * 6, 4 * 3))


def _node(**attrs: Any) -> Node:
    return Node.make("c2i", OpType.COL2IM, ["x"], ["y"], **{**GOOD, **attrs})


def test_the_rule_gives_the_image_of_the_input_dtype() -> None:
    for dtype in (ElemType.F32, ElemType.F16, ElemType.F64):
        (y,) = rule_for(OpType.COL2IM)(_node(), [TensorType(dtype, X.shape)], {})
        assert y == TensorType(dtype, (2, 3, 5, 7))


@pytest.mark.parametrize(
    ("x", "attrs"),
    [
        (TensorType(ElemType.I32, X.shape), {}),
        (TensorType(ElemType.F32, (2, 18, 12, 1)), {}),
        (TensorType(ElemType.F32, (2, 18, 9)), {}),
        (TensorType(ElemType.F32, (2, 17, 12)), {}),
        (X, {"block_shape": (2,)}),
        (X, {"strides": (1, 0)}),
        (X, {"pads": (0, 0, -1, 0)}),
        (X, {"image_shape": (), "block_shape": (), "dilations": (), "pads": (), "strides": ()}),
        (X, {"block_shape": (2, 9)}),
    ],
    ids=["int32", "4-D", "places", "channels", "block rank", "stride 0", "pad < 0", "rank 0",
         "block too large"],
)  # fmt: skip
def test_a_bad_col2im_is_a_typed_error_naming_the_node(x: TensorType, attrs: dict) -> None:
    with pytest.raises(ShapeInferenceError) as err:
        rule_for(OpType.COL2IM)(_node(**attrs), [x], {})
    assert err.value.node == "c2i" and err.value.op == "Col2Im"


def test_col2im_lowers_to_op_48_with_its_five_attributes() -> None:
    op, attrs = lower_node(_node(layout="NCHW"))
    assert op is ExecOp.COL2IM == 48
    assert dict(attrs) == GOOD
    assert (ARITY[OpType.COL2IM].min_in, ARITY[OpType.COL2IM].max_in) == (1, 1)
