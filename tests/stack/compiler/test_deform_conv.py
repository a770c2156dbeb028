"""The IR DeformConv below the importer: its shape and dtype rule (typed errors naming the node
for what the adapter would have refused), the layout pass's NCHW pin, its lowering onto
Executable op 50 and its arity."""

from __future__ import annotations

from typing import Any

import pytest

from stack.compiler import (
    CompileOptions,
    ElemType,
    Graph,
    Node,
    OpType,
    ShapeInferenceError,
    TensorType,
    rule_for,
)
from stack.compiler.lowering import lower_node
from stack.compiler.passes import run_passes
from stack.compiler.verify import ARITY
from stack.runtime import ExecOp

GOOD = {"strides": (2, 1), "pads": (1, 0, 0, 1), "dilations": (1, 2), "group": 2,
        "offset_group": 2}  # fmt: skip
F = ElemType.F32
#: X [2, 4, 7, 6], W [6, 2, 3, 2]: (7 + 1 - 3) // 2 + 1 = 3 by (6 + 1 - 3) // 1 + 1 = 5 places,
#: 2 offset groups of 3 x 2 taps: offset [2, 24, 3, 5], mask [2, 12, 3, 5]
X, W = TensorType(F, (2, 4, 7, 6)), TensorType(F, (6, 2, 3, 2))
OFF, B, MASK = TensorType(F, (2, 24, 3, 5)), TensorType(F, (6,)), TensorType(F, (2, 12, 3, 5))


def _node(n_in: int = 5, **attrs: Any) -> Node:
    ins = ["x", "w", "o", "b", "m"][:n_in]
    return Node.make("dc", OpType.DEFORM_CONV, ins, ["y"], **{**GOOD, **attrs})


def test_the_rule_gives_the_convolution_of_the_input_dtype() -> None:
    for dtype in (ElemType.F32, ElemType.F16, ElemType.F64):
        types = [TensorType(dtype, t.shape) for t in (X, W, OFF, B, MASK)]
        for n_in in (3, 4, 5):
            (y,) = rule_for(OpType.DEFORM_CONV)(_node(n_in), types[:n_in], {})
            assert y == TensorType(dtype, (2, 6, 3, 5))


@pytest.mark.parametrize(
    ("types", "attrs"),
    [
        ([TensorType(ElemType.I32, X.shape), W, OFF], {}),
        ([X, TensorType(ElemType.F64, W.shape), OFF], {}),
        ([X, W, OFF, B, TensorType(ElemType.F16, MASK.shape)], {}),
        ([TensorType(F, (2, 4, 7)), W, OFF], {}),
        ([X, TensorType(F, (6, 2, 3)), OFF], {}),
        ([X, W, OFF], {"group": 1}),
        ([X, TensorType(F, (5, 2, 3, 2)), OFF], {}),
        ([X, W, OFF], {"offset_group": 3}),
        ([X, W, OFF], {"strides": (2,)}),
        ([X, W, OFF], {"dilations": (0, 1)}),
        ([X, W, OFF], {"pads": (0, 0, -1, 0)}),
        ([X, W, OFF], {"offset_group": 0}),
        ([X, TensorType(F, (6, 2, 9, 2)), OFF], {}),
        ([X, W, TensorType(F, (2, 12, 3, 5))], {}),
        ([X, W, TensorType(F, (2, 24, 3, 4))], {}),
        ([X, W, OFF, TensorType(F, (3,))], {}),
        ([X, W, OFF, B, TensorType(F, (2, 24, 3, 5))], {}),
    ],
    ids=["int32", "W float64", "mask float16", "3-D X", "3-D W", "group channels",
         "oC not in groups", "offset_group", "strides of 1", "dilation 0", "pad < 0",
         "offset_group 0", "kernel too large", "offset channels", "offset places", "bias",
         "mask channels"],
)  # fmt: skip
def test_a_bad_deform_conv_is_a_typed_error_naming_the_node(types: list, attrs: dict) -> None:
    with pytest.raises(ShapeInferenceError) as err:
        rule_for(OpType.DEFORM_CONV)(_node(len(types), **attrs), types, {})
    assert err.value.node == "dc" and err.value.op == "DeformConv"


def test_deform_conv_lowers_to_op_50_with_its_five_attributes() -> None:
    op, attrs = lower_node(_node(layout="NCHW"))
    assert op is ExecOp.DEFORM_CONV == 50
    assert dict(attrs) == GOOD
    assert (ARITY[OpType.DEFORM_CONV].min_in, ARITY[OpType.DEFORM_CONV].max_in) == (3, 5)


def test_the_layout_pass_pins_deform_conv_nchw() -> None:
    """DeformConv is of the conv family the layout pass pins NCHW (the Executable's metadata)."""
    types = dict(zip(("x", "w", "o", "b", "m"), (X, W, OFF, B, MASK), strict=True))
    graph = Graph("g", (_node(),), ("x", "w", "o", "b", "m"), ("y",), types)
    out, _ = run_passes(graph, ("infer_shapes", "layout"), CompileOptions())
    (node,) = out.nodes
    assert node.attr("layout") == "NCHW" and out.type_of("y") == TensorType(F, (2, 6, 3, 5))
