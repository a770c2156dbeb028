"""BitCast through the whole stack against onnxruntime and ONNX's reference, bit for bit, and
its bad input as typed errors naming the node.

Every pair of device element types of one width (float32 and int32, float64 and int64, int8
and uint8, bool and uint8 or int8 — onnxruntime has no bool BitCast, so those against ONNX's
reference alone) on random bytes, which hold NaNs with payloads, infinities, signed zeros and
subnormals; a scalar, an empty tensor and a 4-D one; BitCast inside a graph (the sign bit
cleared through int32, back to float32); constant inputs folded at import, which reach the
types the IR carries but the device does not (float16 and int16 or uint16, uint32 and
float32); a BitCast to the input's own type."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from stack.adapter import import_model
from stack.adapter.errors import ModelFormatError, UnsupportedTypeError
from stack.compiler import CompiledModel, OpType, UnsupportedDTypeError
from stack.compiler.jit import shared_runtime
from tests.stack.adapter.both import node_model, ort_run, stack_run

RNG = np.random.default_rng(55)
#: (from, to) pairs of device types onnxruntime runs.
ORT_PAIRS = [
    (np.float32, np.int32), (np.int32, np.float32), (np.float64, np.int64),
    (np.int64, np.float64), (np.int8, np.uint8), (np.uint8, np.int8),
]  # fmt: skip
#: (from, to) pairs with bool: ONNX's reference only.
BOOL_PAIRS = [(np.bool_, np.uint8), (np.bool_, np.int8), (np.uint8, np.bool_), (np.int8, np.bool_)]
SHAPES = [(2, 3, 5), (), (0, 4), (2, 1, 3, 4)]


def onnx_type(dtype: Any) -> int:
    return helper.np_dtype_to_tensor_dtype(np.dtype(dtype))


def bitcast_model(x: np.ndarray, to: Any) -> onnx.ModelProto:
    return node_model("BitCast", {"x": x}, 26, to=onnx_type(to))


def random_bits(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """Random bytes as ``dtype`` (bool: 0 or 1 only, the bytes a bool holds)."""
    if np.dtype(dtype) == np.bool_:
        return RNG.integers(0, 2, shape).astype(np.bool_)
    n = int(np.prod(shape)) * np.dtype(dtype).itemsize
    return RNG.integers(0, 256, n, dtype=np.uint8).view(dtype).reshape(shape)


def bits(a: np.ndarray) -> np.ndarray:
    """The array's bytes, so that NaNs and signed zeros compare by their bits."""
    return np.ascontiguousarray(a).view(np.uint8)


def name(pair: tuple[Any, Any]) -> str:
    return f"{np.dtype(pair[0]).name}->{np.dtype(pair[1]).name}"


@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("pair", ORT_PAIRS, ids=name)
def test_bitcast_matches_onnxruntime_and_the_onnx_reference(
    pair: tuple[Any, Any], shape: tuple[int, ...]
) -> None:
    src, to = pair
    x = random_bits(shape, src)
    model = bitcast_model(x, to)
    got, ref = stack_run(model, {"x": x}), ort_run(model, {"x": x})
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    assert got.dtype == ref.dtype == want.dtype == to and got.shape == shape
    np.testing.assert_array_equal(bits(got), bits(ref))
    np.testing.assert_array_equal(bits(got), bits(want))


@pytest.mark.parametrize("pair", BOOL_PAIRS, ids=name)
def test_bool_bitcasts_match_the_onnx_reference(pair: tuple[Any, Any]) -> None:
    """Bytes other than 0 and 1 read as bool stay those bytes, as in ONNX's reference."""
    src, to = pair
    x = random_bits((3, 7), src)
    model = bitcast_model(x, to)
    got = stack_run(model, {"x": x})
    (want,) = ReferenceEvaluator(model).run(None, {"x": x})
    assert got.dtype == want.dtype == to and got.shape == (3, 7)
    np.testing.assert_array_equal(bits(got), bits(want))


def test_special_floats_keep_their_bits() -> None:
    """A quiet and a signalling NaN with payloads, both zeros, both infinities, the smallest
    subnormal: as int32 exactly their IEEE-754 patterns, and back."""
    patterns = np.array(
        [0x7FC00001, 0x7F800001, 0xFFC12345, 0x80000000, 0, 0x7F800000, 0xFF800000, 1], np.uint32
    ).view(np.int32)
    x = patterns.view(np.float32)
    got = stack_run(bitcast_model(x, np.int32), {"x": x})
    np.testing.assert_array_equal(got, patterns)
    back = stack_run(bitcast_model(patterns, np.float32), {"x": patterns})
    np.testing.assert_array_equal(bits(back), bits(x))


def _abs_by_bits() -> onnx.ModelProto:
    """|x| for float32 x by clearing the sign bit: BitCast int32, BitwiseAnd, BitCast back."""
    nodes = [
        helper.make_node("BitCast", ["x"], ["i"], to=TensorProto.INT32, name="to_int"),
        helper.make_node("BitwiseAnd", ["i", "mask"], ["m"], name="clear_sign"),
        helper.make_node("BitCast", ["m"], ["y"], to=TensorProto.FLOAT, name="to_float"),
    ]
    mask = numpy_helper.from_array(np.array(0x7FFFFFFF, np.int32), "mask")
    graph = helper.make_graph(
        nodes,
        "abs_bits",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 6])],
        [mask],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 26)])


def test_bitcast_inside_a_graph_matches_onnxruntime() -> None:
    x = random_bits((4, 6), np.float32)
    model = _abs_by_bits()
    got, ref = stack_run(model, {"x": x}), ort_run(model, {"x": x})
    np.testing.assert_array_equal(bits(got), bits(ref))
    np.testing.assert_array_equal(bits(got), bits(np.abs(x)))
    ops = [n.op for n in import_model(model).nodes]
    assert ops.count(OpType.BITCAST) == 2


def _folded_model(c: np.ndarray, to: int, then: int) -> onnx.ModelProto:
    """A constant BitCast to ``to``, then a Cast to the device type ``then``, plus x."""
    nodes = [
        helper.make_node("BitCast", ["c"], ["b"], to=to, name="n0"),
        helper.make_node("Cast", ["b"], ["k"], to=then, name="cast"),
        helper.make_node("Add", ["x", "k"], ["y"], name="add"),
    ]
    x_vi = helper.make_tensor_value_info("x", then, list(c.shape))
    graph = helper.make_graph(
        nodes, "folded", [x_vi], [helper.make_empty_tensor_value_info("y")],
        [numpy_helper.from_array(c, "c")],
    )  # fmt: skip
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 26)])


FOLDED = {
    "float16->int16": (np.float16, TensorProto.INT16, TensorProto.INT32, np.int32),
    "float16->uint16": (np.float16, TensorProto.UINT16, TensorProto.INT32, np.int32),
    "int16->float16": (np.int16, TensorProto.FLOAT16, TensorProto.FLOAT, np.float32),
    "uint32->float32": (np.uint32, TensorProto.FLOAT, TensorProto.DOUBLE, np.float64),
    "float32->int32": (np.float32, TensorProto.INT32, TensorProto.INT64, np.int64),
}


@pytest.mark.parametrize("case", list(FOLDED))
def test_constant_bitcasts_fold_at_import_as_onnxruntime(case: str) -> None:
    src, to, then, then_np = FOLDED[case]
    c = np.abs(random_bits((3, 4), src)) if np.dtype(src).kind == "f" else random_bits((3, 4), src)
    c = np.nan_to_num(c, nan=1.0, posinf=2.0, neginf=-2.0).astype(src)
    model = _folded_model(c, to, then)
    assert OpType.BITCAST not in [n.op for n in import_model(model).nodes]
    x = RNG.integers(-5, 5, (3, 4)).astype(then_np)
    got, ref = stack_run(model, {"x": x}), ort_run(model, {"x": x})
    np.testing.assert_array_equal(bits(got), bits(ref))


def test_a_bitcast_to_the_same_type_is_the_input() -> None:
    x = random_bits((2, 3), np.int32)
    model = bitcast_model(x, np.int32)
    assert [n.op for n in import_model(model).nodes] == [OpType.IDENTITY]
    np.testing.assert_array_equal(stack_run(model, {"x": x}), x)


def test_a_run_time_type_without_a_device_dtype_is_a_typed_error() -> None:
    """float16 -> int16 imports (the IR carries int16), but the device holds no int16."""
    x = random_bits((2, 3), np.float16)
    graph = import_model(bitcast_model(x, np.int16))
    with pytest.raises(UnsupportedDTypeError) as err:
        CompiledModel(graph, runtime=shared_runtime())
    assert err.value.details["dtype"] == "int16" and err.value.node == "y"


def _raw(to: int | None, x: tuple[str, int, list[int]] = ("x", TensorProto.FLOAT, [2, 3]),
         opset: int = 26, **kw: Any) -> onnx.ModelProto:  # fmt: skip
    attrs = {} if to is None else {"to": to}
    node = helper.make_node("BitCast", kw.get("inputs", ["x"]), ["y"], name="n0", **attrs)
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info(*x)], [helper.make_empty_tensor_value_info("y")]
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


I16, U8, I64 = TensorProto.INT16, TensorProto.UINT8, TensorProto.INT64
ERRORS: dict[str, tuple[onnx.ModelProto, type[Exception]]] = {
    "to string": (_raw(TensorProto.STRING), UnsupportedTypeError),
    "to bfloat16": (_raw(TensorProto.BFLOAT16, ("x", I16, [2])), UnsupportedTypeError),
    "to float8": (_raw(TensorProto.FLOAT8E4M3FN, ("x", U8, [2])), UnsupportedTypeError),
    "to complex64": (_raw(TensorProto.COMPLEX64, ("x", I64, [2])), UnsupportedTypeError),
    "to an unknown type": (_raw(999), ModelFormatError),
    "to undefined": (_raw(TensorProto.UNDEFINED), ModelFormatError),
    "no to": (_raw(None), ModelFormatError),
    "a wider type": (_raw(TensorProto.INT64), ModelFormatError),
    "a narrower type": (_raw(TensorProto.FLOAT16), ModelFormatError),
    "bool to int32": (_raw(TensorProto.INT32, ("x", TensorProto.BOOL, [2])), ModelFormatError),
    "opset 25": (_raw(TensorProto.INT32, opset=25), ModelFormatError),
    "two inputs": (_raw(TensorProto.INT32, inputs=["x", "x"]), ModelFormatError),
}  # fmt: skip


@pytest.mark.parametrize("case", list(ERRORS))
def test_bad_input_is_a_typed_error_naming_the_node(case: str) -> None:
    model, error = ERRORS[case]
    with pytest.raises(error) as err:
        import_model(model)
    assert type(err.value) is error and err.value.node == "n0", err.value


def test_the_error_says_the_widths() -> None:
    with pytest.raises(ModelFormatError, match=r"float32 \(32 bits\) as int64 \(64 bits\)"):
        import_model(ERRORS["a wider type"][0])


def test_a_string_input_is_refused_as_a_typed_error_naming_the_tensor() -> None:
    """A string tensor never reaches the node: the graph input itself has no IR type."""
    with pytest.raises(UnsupportedTypeError) as err:
        import_model(_raw(TensorProto.UINT8, ("x", TensorProto.STRING, [2])))
    assert err.value.node == "x"
