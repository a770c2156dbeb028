"""The IR AffineGrid below the importer: its shape and dtype rule (typed errors naming the node
for what the adapter would have refused), its lowering onto Executable op 49 and its arity."""

from __future__ import annotations

from typing import Any

import pytest

from stack.compiler import ElemType, Node, OpType, ShapeInferenceError, TensorType, rule_for
from stack.compiler.lowering import lower_node
from stack.compiler.verify import ARITY
from stack.runtime import ExecOp

GOOD = {"size": (2, 3, 4, 5), "align_corners": 1}
THETA = TensorType(ElemType.F32, (2, 2, 3))


def _node(**attrs: Any) -> Node:
    return Node.make("ag", OpType.AFFINE_GRID, ["theta"], ["grid"], **{**GOOD, **attrs})


def test_the_rule_gives_the_grid_of_theta_dtype() -> None:
    for dtype in (ElemType.F32, ElemType.F16, ElemType.F64):
        (grid,) = rule_for(OpType.AFFINE_GRID)(_node(), [TensorType(dtype, THETA.shape)], {})
        assert grid == TensorType(dtype, (2, 4, 5, 2))
    theta = TensorType(ElemType.F32, (1, 3, 4))
    (grid,) = rule_for(OpType.AFFINE_GRID)(_node(size=(1, 0, 2, 3, 4)), [theta], {})
    assert grid == TensorType(ElemType.F32, (1, 2, 3, 4, 3))


@pytest.mark.parametrize(
    ("theta", "attrs"),
    [
        (TensorType(ElemType.I64, THETA.shape), {}),
        (TensorType(ElemType.F32, (2, 3, 4)), {}),
        (TensorType(ElemType.F32, (1, 2, 3)), {}),
        (TensorType(ElemType.F32, (2, 2, 3, 1)), {}),
        (THETA, {"size": (2, 3, 4)}),
        (THETA, {"size": (2, 3, 4, 5, 6, 7)}),
        (THETA, {"size": ()}),
        (THETA, {"size": (2, 3, 0, 5)}),
        (THETA, {"size": (2, -1, 4, 5)}),
        (THETA, {"align_corners": 2}),
    ],
    ids=["int64", "3-D theta", "batch", "4-D theta", "size of 3", "size of 6", "no size",
         "spatial 0", "channels < 0", "align_corners 2"],
)  # fmt: skip
def test_a_bad_affine_grid_is_a_typed_error_naming_the_node(theta: TensorType, attrs: dict) -> None:
    with pytest.raises(ShapeInferenceError) as err:
        rule_for(OpType.AFFINE_GRID)(_node(**attrs), [theta], {})
    assert err.value.node == "ag" and err.value.op == "AffineGrid"


def test_affine_grid_lowers_to_op_49_with_size_and_align_corners() -> None:
    op, attrs = lower_node(_node())
    assert op is ExecOp.AFFINE_GRID == 49
    assert dict(attrs) == GOOD
    assert (ARITY[OpType.AFFINE_GRID].min_in, ARITY[OpType.AFFINE_GRID].max_in) == (1, 1)
