"""The IR QLinearConv below the importer: its shape and dtype rule (y_zero_point's type of the
convolution's shape for every int8/uint8 pairing of x, w and y; typed errors naming the node
for what the adapter would have refused), the layout pass's NCHW pin, its lowering onto
Executable op 54, its arity and the Executable's op record; like Conv and ConvInteger it has no
constant-folding evaluator."""

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

QC = OpType.QLINEARCONV
GOOD = {"strides": (2, 1), "pads": (1, 0, 0, 1), "dilations": (1, 2), "group": 2}
U8, I8, F32, I32 = ElemType.U8, ElemType.I8, ElemType.F32, ElemType.I32
NAMES = ("x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b")
#: x [2, 4, 7, 6], w [6, 2, 3, 2]: (7 + 1 - 3) // 2 + 1 = 3 by (6 + 1 - 3) // 1 + 1 = 5 places
X, W = TensorType(U8, (2, 4, 7, 6)), TensorType(I8, (6, 2, 3, 2))
S, WS, B = TensorType(F32, ()), TensorType(F32, (6,)), TensorType(I32, (6,))
TYPES = [X, S, TensorType(U8, ()), W, WS, TensorType(I8, (6,)), S, TensorType(U8, ()), B]
Y = TensorType(U8, (2, 6, 3, 5))


def _node(n_in: int = 9, **attrs: Any) -> Node:
    return Node.make("qc", QC, list(NAMES[:n_in]), ["y"], **{**GOOD, **attrs})


def _types(**change: TensorType) -> list[TensorType]:
    """TYPES with the inputs named in ``change`` (by NAMES) replaced."""
    return [change.get(n, t) for n, t in zip(NAMES, TYPES, strict=True)]


@pytest.mark.parametrize("dtypes", [(U8, I8, U8), (U8, U8, U8), (I8, I8, I8), (I8, U8, U8),
                                    (U8, I8, I8)])  # fmt: skip
def test_the_rule_gives_y_zero_points_type(dtypes: tuple[ElemType, ElemType, ElemType]) -> None:
    xd, wd, yd = dtypes
    types = _types(x=TensorType(xd, X.shape), xz=TensorType(xd, (1,)), w=TensorType(wd, W.shape),
                   wz=TensorType(wd, ()), yz=TensorType(yd, (1,)), ws=S)  # fmt: skip
    for n_in in (8, 9):
        assert rule_for(QC)(_node(n_in), types[:n_in], {}) == [TensorType(yd, Y.shape)]


@pytest.mark.parametrize(
    ("change", "attrs"),
    [
        ({"x": TensorType(I32, X.shape)}, {}),
        ({"w": TensorType(F32, W.shape)}, {}),
        ({"xs": TensorType(ElemType.F64, ())}, {}),
        ({"xs": TensorType(F32, (2,))}, {}),
        ({"xz": TensorType(I8, ())}, {}),
        ({"ws": TensorType(F32, (3,))}, {}),
        ({"wz": TensorType(U8, (6,))}, {}),
        ({"wz": TensorType(I8, (2,))}, {}),
        ({"ys": TensorType(ElemType.F16, ())}, {}),
        ({"yz": TensorType(I32, ())}, {}),
        ({"yz": TensorType(U8, (2,))}, {}),
        ({"b": TensorType(ElemType.I64, (6,))}, {}),
        ({"b": TensorType(I32, (1, 6))}, {}),
        ({"x": TensorType(U8, (2, 4, 7))}, {}),
        ({"w": TensorType(I8, (6, 2, 3))}, {}),
        ({}, {"group": 1}),
        ({"w": TensorType(I8, (5, 2, 3, 2))}, {}),
        ({}, {"strides": (2,)}),
        ({}, {"dilations": (0, 1)}),
        ({}, {"pads": (0, 0, -1, 0)}),
        ({}, {"group": 0}),
        ({"w": TensorType(I8, (6, 2, 9, 2))}, {}),
    ],
    ids=["x int32", "w float32", "x_scale float64", "two x scales", "x_zero_point int8",
         "three w scales", "w_zero_point uint8", "two w zero points", "y_scale float16",
         "y_zero_point int32", "two y zero points", "B int64", "2-D B", "3-D x", "3-D w",
         "group channels", "M not in groups", "strides of 1", "dilation 0", "pad < 0",
         "group 0", "kernel too large"],
)  # fmt: skip
def test_a_bad_qlinear_conv_is_a_typed_error_naming_the_node(change: dict, attrs: dict) -> None:
    with pytest.raises(ShapeInferenceError) as err:
        rule_for(QC)(_node(**attrs), _types(**change), {})
    assert err.value.node == "qc" and err.value.op == "QLinearConv"


def test_a_missing_input_is_a_typed_error_naming_the_node() -> None:
    with pytest.raises(ShapeInferenceError, match="input 7 is required") as err:
        rule_for(QC)(_node(7), TYPES[:7], {})
    assert err.value.node == "qc"


def test_qlinear_conv_lowers_to_op_54_with_its_four_attributes() -> None:
    op, attrs = lower_node(_node(layout="NCHW"))
    assert op is ExecOp.QLINEARCONV == 54
    assert dict(attrs) == GOOD
    assert (ARITY[QC].min_in, ARITY[QC].max_in, ARITY[QC].min_out, ARITY[QC].max_out) == (
        8,
        9,
        1,
        1,
    )


def test_the_layout_pass_pins_qlinear_conv_nchw() -> None:
    graph = Graph("g", (_node(),), NAMES, ("y",), dict(zip(NAMES, TYPES, strict=True)))
    out, _ = run_passes(graph, ("infer_shapes", "layout"), CompileOptions())
    (node,) = out.nodes
    assert node.attr("layout") == "NCHW" and out.type_of("y") == Y


def test_constant_operands_are_not_folded_and_the_executable_records_y_zero_points_type() -> None:
    """No evaluator: constant w, scales, zero points and B stay constants read by one device op,
    whose record carries the four attributes and writes y U8."""
    assert evaluator_for(QC) is None
    consts = {"xs": np.array(0.5, np.float32), "xz": np.array(3, np.uint8),
              "w": np.ones(W.shape, np.int8), "ws": np.full(6, 0.25, np.float32),
              "wz": np.zeros(6, np.int8), "ys": np.array(2.0, np.float32),
              "yz": np.array(128, np.uint8), "b": np.arange(6, dtype=np.int32)}  # fmt: skip
    graph = Graph("g", (_node(),), ("x",), ("y",), {"x": X}, consts)
    exe = compile_graph(graph).executable
    (op,) = exe.ops
    assert op.op is ExecOp.QLINEARCONV and dict(op.attrs) == GOOD
    assert [exe.tensors[i].name for i in op.inputs] == list(NAMES)
    (y,) = (exe.tensors[i] for i in op.outputs)
    assert (y.name, y.dtype, y.shape) == ("y", ExecDType.U8, Y.shape)
