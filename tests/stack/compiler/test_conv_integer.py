"""The IR ConvInteger below the importer: its shape and dtype rule (int32 of the convolution's
shape for every int8/uint8 pairing; typed errors naming the node for what the adapter would
have refused), the layout pass's NCHW pin, its lowering onto Executable op 53, its arity and
the Executable's op record; like Conv it has no constant-folding evaluator."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from stack.compiler import (
    CompileOptions,
    ElemType,
    Graph,
    Node,
    OpType,
    ShapeInferenceError,
    TensorType,
    compile_graph,
    evaluator_for,
    rule_for,
)
from stack.compiler.lowering import lower_node
from stack.compiler.passes import run_passes
from stack.compiler.verify import ARITY
from stack.runtime import ExecDType, ExecOp

CI = OpType.CONV_INTEGER
GOOD = {"strides": (2, 1), "pads": (1, 0, 0, 1), "dilations": (1, 2), "group": 2}
U8, I8 = ElemType.U8, ElemType.I8
#: x [2, 4, 7, 6], w [6, 2, 3, 2]: (7 + 1 - 3) // 2 + 1 = 3 by (6 + 1 - 3) // 1 + 1 = 5 places
X, W = TensorType(U8, (2, 4, 7, 6)), TensorType(I8, (6, 2, 3, 2))
XZ, WZ = TensorType(U8, ()), TensorType(I8, (6,))
Y = TensorType(ElemType.I32, (2, 6, 3, 5))


def _node(n_in: int = 4, **attrs: Any) -> Node:
    return Node.make("ci", CI, ["x", "w", "xz", "wz"][:n_in], ["y"], **{**GOOD, **attrs})


@pytest.mark.parametrize("dtypes", [(U8, I8), (U8, U8), (I8, I8), (I8, U8)])
def test_the_rule_gives_the_int32_convolution(dtypes: tuple[ElemType, ElemType]) -> None:
    x, w = TensorType(dtypes[0], X.shape), TensorType(dtypes[1], W.shape)
    zps = [TensorType(dtypes[0], (1,)), TensorType(dtypes[1], ())]
    for n_in in (2, 3, 4):
        assert rule_for(CI)(_node(n_in), [x, w, *zps][:n_in], {}) == [Y]


@pytest.mark.parametrize(
    ("types", "attrs"),
    [
        ([TensorType(ElemType.I32, X.shape), W], {}),
        ([X, TensorType(ElemType.F32, W.shape)], {}),
        ([X, W, TensorType(I8, ())], {}),
        ([X, W, XZ, TensorType(U8, (6,))], {}),
        ([X, W, TensorType(U8, (2,))], {}),
        ([X, W, XZ, TensorType(I8, (3,))], {}),
        ([TensorType(U8, (2, 4, 7)), W], {}),
        ([X, TensorType(I8, (6, 2, 3))], {}),
        ([X, W], {"group": 1}),
        ([X, TensorType(I8, (5, 2, 3, 2))], {}),
        ([X, W], {"strides": (2,)}),
        ([X, W], {"dilations": (0, 1)}),
        ([X, W], {"pads": (0, 0, -1, 0)}),
        ([X, W], {"group": 0}),
        ([X, TensorType(I8, (6, 2, 9, 2))], {}),
        ([X], {}),
    ],
    ids=["x int32", "w float32", "x_zero_point int8", "w_zero_point uint8",
         "two x zero points", "three w zero points", "3-D x", "3-D w", "group channels",
         "M not in groups", "strides of 1", "dilation 0", "pad < 0", "group 0",
         "kernel too large", "no w"],
)  # fmt: skip
def test_a_bad_conv_integer_is_a_typed_error_naming_the_node(types: list, attrs: dict) -> None:
    with pytest.raises(ShapeInferenceError) as err:
        rule_for(CI)(_node(len(types), **attrs), types, {})
    assert err.value.node == "ci" and err.value.op == "ConvInteger"


def test_conv_integer_lowers_to_op_53_with_its_four_attributes() -> None:
    op, attrs = lower_node(_node(layout="NCHW"))
    assert op is ExecOp.CONV_INTEGER == 53
    assert dict(attrs) == GOOD
    assert (ARITY[CI].min_in, ARITY[CI].max_in, ARITY[CI].max_out) == (2, 4, 1)


def test_the_layout_pass_pins_conv_integer_nchw() -> None:
    types = dict(zip(("x", "w", "xz", "wz"), (X, W, XZ, WZ), strict=True))
    graph = Graph("g", (_node(),), ("x", "w", "xz", "wz"), ("y",), types)
    out, _ = run_passes(graph, ("infer_shapes", "layout"), CompileOptions())
    (node,) = out.nodes
    assert node.attr("layout") == "NCHW" and out.type_of("y") == Y


def test_constant_operands_are_not_folded_and_the_executable_records_an_int32_output() -> None:
    """No evaluator: constant w and zero points stay constants read by one device op, whose
    record carries the four attributes and writes y I32."""
    assert evaluator_for(CI) is None
    consts = {"w": np.ones(W.shape, np.int8), "xz": np.array(3, np.uint8),
              "wz": np.zeros(6, np.int8)}  # fmt: skip
    graph = Graph("g", (_node(),), ("x",), ("y",), {"x": X}, consts)
    exe = compile_graph(graph).executable
    (op,) = exe.ops
    assert op.op is ExecOp.CONV_INTEGER and dict(op.attrs) == GOOD
    assert [exe.tensors[i].name for i in op.inputs] == ["x", "w", "xz", "wz"]
    (y,) = (exe.tensors[i] for i in op.outputs)
    assert (y.name, y.dtype, y.shape) == ("y", ExecDType.I32, Y.shape)
