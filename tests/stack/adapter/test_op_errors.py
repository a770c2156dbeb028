"""Bad input to the point-wise, reduction and indexing ops: a typed error naming the node.

Each case is a one-node model with a wrong rank, an axis out of range or mismatched dtypes;
importing it must raise the named StackError subclass with ``node == "n0"`` (never an
IndexError, KeyError or ZeroDivisionError from inside the stack)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

from stack.adapter import import_model
from stack.adapter.errors import DynamicShapeError, UnsupportedOpError, UnsupportedTypeError
from stack.compiler import ShapeInferenceError

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def _model(op: str, inputs: list[tuple[str, int, list[int]]], consts: dict[str, Any] | None = None,
           n_out: int = 1, **attrs: Any):  # type: ignore[no-untyped-def]  # fmt: skip
    consts = consts or {}
    names = [n for n, _, _ in inputs] + list(consts)
    outs = [f"y{i}" for i in range(n_out)]
    node = helper.make_node(op, names, outs, name="n0", **attrs)
    vis = [helper.make_tensor_value_info(n, t, s) for n, t, s in inputs]
    inits = [numpy_helper.from_array(np.asarray(v), n) for n, v in consts.items()]
    out_vis = [helper.make_empty_tensor_value_info(o) for o in outs]
    graph = helper.make_graph([node], "g", vis, out_vis, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


X = ("x", F, [2, 3])
CASES = {
    "gather axis out of range": (
        _model("Gather", [X, ("i", I64, [2])], axis=2),
        ShapeInferenceError,
    ),
    "gather float indices": (_model("Gather", [X, ("i", F, [2])]), ShapeInferenceError),
    "gather_elements rank": (_model("GatherElements", [X, ("i", I64, [2])]), ShapeInferenceError),
    "slice axis": (
        _model("Slice", [X], {"s": np.array([0]), "e": np.array([1]), "a": np.array([4])}),
        ShapeInferenceError,
    ),
    "split sizes": (
        _model("Split", [X], {"s": np.array([1, 1])}, n_out=2, axis=1),
        ShapeInferenceError,
    ),
    "expand clash": (_model("Expand", [X], {"s": np.array([4, 4])}), ShapeInferenceError),
    "tile repeats": (_model("Tile", [X], {"r": np.array([2])}), ShapeInferenceError),
    "pad length": (_model("Pad", [X], {"p": np.array([1, 1])}), ShapeInferenceError),
    "reduce axis": (_model("ReduceSum", [X], {"a": np.array([3])}), ShapeInferenceError),
    "reduce bool sum": (_model("ReduceSum", [("x", B, [2, 3])]), ShapeInferenceError),
    "argmax axis": (_model("ArgMax", [X], axis=-3), ShapeInferenceError),
    "cumsum axis": (_model("CumSum", [X], {"a": np.array(5)}), ShapeInferenceError),
    "topk k": (_model("TopK", [X], {"k": np.array([4])}, n_out=2), ShapeInferenceError),
    "where dtypes": (
        _model("Where", [("c", B, [2, 3]), X, ("z", I64, [2, 3])]),
        ShapeInferenceError,
    ),
    "where condition": (_model("Where", [X, X, ("z", F, [2, 3])]), ShapeInferenceError),
    "less dtypes": (_model("Less", [X, ("z", I64, [2, 3])]), ShapeInferenceError),
    "and on floats": (_model("And", [X, ("z", F, [2, 3])]), ShapeInferenceError),
    "exp on integers": (_model("Exp", [("x", I64, [2])]), ShapeInferenceError),
    "pow bool exponent": (_model("Pow", [X, ("e", B, [3])]), ShapeInferenceError),
    "mod broadcast": (_model("Mod", [X, ("z", F, [4])]), ShapeInferenceError),
    "trilu rank": (_model("Trilu", [("x", F, [3])]), ShapeInferenceError),
    "softmax axis": (_model("LogSoftmax", [X], axis=2), ShapeInferenceError),
    "cast to string": (_model("Cast", [X], to=TensorProto.STRING), UnsupportedTypeError),
    "range at run time": (
        _model("Range", [("s", I64, []), ("l", I64, []), ("d", I64, [])]),
        DynamicShapeError,
    ),
    "instance norm on integers": (
        _model(
            "InstanceNormalization", [("x", I64, [1, 2, 3])], {"s": np.ones(2), "b": np.ones(2)}
        ),
        ShapeInferenceError,
    ),
    "resize antialias": (
        _model(
            "Resize",
            [X],
            {"r": np.zeros(0, np.float32), "s": np.array([2.0, 2.0], np.float32)},
            mode="linear",
            antialias=1,
        ),
        UnsupportedOpError,
    ),
    "slice bounds at run time": (
        _model("Slice", [X, ("s", I64, [1]), ("e", I64, [1])]),
        DynamicShapeError,
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_bad_input_is_a_typed_error_naming_the_node(case: str) -> None:
    model, error = CASES[case]
    with pytest.raises(error) as err:
        import_model(model)
    assert err.value.node == "n0", err.value


def test_a_run_time_shape_tensor_is_named() -> None:
    model, _ = CASES["slice bounds at run time"]
    with pytest.raises(DynamicShapeError) as err:
        import_model(model)
    assert err.value.tensor == "s" and "'s'" in str(err.value)
