# ruff: noqa: E501 - the case table of bad models reads best one case per line
"""ConvInteger through the whole stack against onnxruntime and ONNX's reference, exactly (int32),
and its bad input as typed errors naming the node.

Every int8/uint8 pairing of x and w; no zero point, x's alone, both, w's alone (given a zero x
one), as graph inputs or initializers; strides, pads, dilations, groups; auto_pad SAME_UPPER,
SAME_LOWER and VALID; 1-D (promoted to 2-D); batch > 1; opsets 10, 13 and 21; w's per-channel
zero point against ONNX's reference (onnxruntime's CPU kernel refuses it); the ONNX node tests'
data; a dynamically quantised Conv (DynamicQuantizeLinear -> ConvInteger -> Cast -> Mul) bit
for bit; a 3-D convolution refused naming the layers."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from stack.adapter import import_model
from stack.adapter.errors import ModelFormatError, UnsupportedOpError
from stack.compiler import OpType
from tests.stack.adapter.both import node_model, ort_run, stack_run

RNG = np.random.default_rng(53)
I8, U8 = np.int8, np.uint8


def _ints(shape: tuple[int, ...], dtype: type) -> np.ndarray:
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max + 1, shape).astype(dtype)


def feeds(xs, ws, x_dtype=U8, w_dtype=I8, zps="both"):  # type: ignore[no-untyped-def]
    """Random x and w of the shapes and dtypes and the zero points ``zps`` names (none, x, both;
    per tensor)."""
    out = {"x": _ints(xs, x_dtype), "w": _ints(ws, w_dtype)}
    if zps in ("x", "both"):
        out["x_zp"] = _ints((), x_dtype)
    if zps == "both":
        out["w_zp"] = _ints((), w_dtype)
    return out


def ci_model(arrays: dict[str, np.ndarray], opset: int = 10, consts=(), **attrs: Any):  # type: ignore[no-untyped-def]
    return node_model("ConvInteger", arrays, opset, consts, **attrs)


def assert_exact(got: np.ndarray, want: np.ndarray) -> None:
    assert (got.dtype, got.shape) == (np.dtype(np.int32), want.shape)
    np.testing.assert_array_equal(got, want)


CASES = {  # (x shape, w shape, attributes)
    "onnx basic": ((1, 1, 3, 3), (1, 1, 2, 2), {}),
    "pads": ((2, 3, 6, 5), (4, 3, 3, 3), {"pads": [1, 2, 0, 1]}),
    "strides dilations": ((1, 4, 9, 8), (5, 4, 3, 2), {"strides": [2, 3], "dilations": [2, 1]}),
    "groups": ((2, 6, 7, 7), (4, 3, 3, 3), {"group": 2, "pads": [1, 1, 1, 1]}),
    "depthwise": ((1, 4, 6, 6), (4, 1, 3, 3), {"group": 4, "strides": [2, 2]}),
    "same upper": ((1, 3, 7, 6), (2, 3, 4, 3), {"auto_pad": "SAME_UPPER", "strides": [2, 1]}),
    "same lower": ((1, 3, 7, 6), (2, 3, 4, 3), {"auto_pad": "SAME_LOWER", "strides": [2, 1]}),
    "valid": ((1, 2, 6, 6), (3, 2, 3, 3), {"auto_pad": "VALID", "kernel_shape": [3, 3]}),
    "1-D": ((2, 3, 11), (4, 3, 3), {"pads": [2, 1], "strides": [2], "dilations": [2]}),
    "1-D same": ((1, 2, 9), (3, 2, 4), {"auto_pad": "SAME_LOWER"}),
}
PAIRS = [(U8, I8), (U8, U8), (I8, I8), (I8, U8)]


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("dtypes", PAIRS, ids=["u8-i8", "u8-u8", "i8-i8", "i8-u8"])
@pytest.mark.parametrize("zps", ["none", "x", "both"])
def test_conv_integer_matches_onnxruntime(case: str, dtypes: tuple, zps: str) -> None:
    xs, ws, attrs = CASES[case]
    arrays = feeds(xs, ws, *dtypes, zps)
    model = ci_model(arrays, **attrs)
    assert_exact(stack_run(model, arrays), ort_run(model, arrays))


@pytest.mark.parametrize("case", list(CASES))
def test_conv_integer_matches_the_onnx_reference(case: str) -> None:
    xs, ws, attrs = CASES[case]
    arrays = feeds(xs, ws)
    model = ci_model(arrays, **attrs)
    (want,) = ReferenceEvaluator(model).run(None, arrays)
    assert_exact(stack_run(model, arrays), np.asarray(want))


@pytest.mark.parametrize("opset", [10, 13, 21])
def test_constant_weights_and_zero_points_at_every_opset(opset: int) -> None:
    """The usual quantised model: w and both zero points initializers, x at run time."""
    arrays = feeds((2, 3, 8, 8), (4, 3, 3, 3))
    model = ci_model(arrays, opset, ("w", "x_zp", "w_zp"), pads=[1, 1, 1, 1], strides=[2, 2])
    assert_exact(stack_run(model, {"x": arrays["x"]}), ort_run(model, {"x": arrays["x"]}))


@pytest.mark.parametrize("dtypes", PAIRS, ids=["u8-i8", "u8-u8", "i8-i8", "i8-u8"])
def test_a_per_channel_w_zero_point_matches_the_onnx_reference(dtypes: tuple) -> None:
    arrays = feeds((2, 4, 6, 5), (6, 2, 3, 2), *dtypes)
    arrays["w_zp"] = _ints((6,), dtypes[1])
    model = ci_model(arrays, group=2, pads=[1, 0, 1, 1], dilations=[1, 2])
    (want,) = ReferenceEvaluator(model).run(None, arrays)
    assert_exact(stack_run(model, arrays), np.asarray(want))


def test_the_onnx_node_tests_data() -> None:
    """test_convinteger_with_padding: the padding is x's zero point (it adds nothing), w's
    zero points [0, 1] zero the second output channel."""
    arrays = {"x": np.arange(2, 11, dtype=U8).reshape(1, 1, 3, 3), "w": np.ones((2, 1, 2, 2), U8),
              "x_zp": np.array(1, U8), "w_zp": np.array([0, 1], U8)}  # fmt: skip
    got = stack_run(ci_model(arrays, pads=[1, 1, 1, 1]), arrays)
    assert got[0, 0].tolist() == [[1, 3, 5, 3], [5, 12, 16, 9], [11, 24, 28, 15], [7, 15, 17, 9]]
    assert not got[0, 1].any()


def test_a_w_zero_point_without_an_x_one_is_given_a_zero_x_zero_point() -> None:
    arrays = feeds((1, 2, 5, 5), (3, 2, 3, 3), zps="none")
    arrays["w_zp"] = _ints((), I8)
    model = ci_model(arrays)
    node = model.graph.node[0]
    node.input[2:] = ["", "w_zp"]
    graph = import_model(model)
    (conv,) = graph.nodes
    assert conv.op is OpType.CONV_INTEGER and conv.inputs[::3] == ("x", "w_zp")
    zero = graph.constants[conv.inputs[2]]
    assert (zero.dtype, zero.shape, int(zero)) == (np.dtype(U8), (), 0)
    assert_exact(stack_run(model, arrays), ort_run(model, arrays))


def test_a_dynamically_quantised_conv_matches_onnxruntime_bit_for_bit() -> None:
    """onnxruntime's dynamic quantisation of a Conv: DynamicQuantizeLinear of the activation,
    ConvInteger with its zero point and the uint8 weights', Cast, the product of the scales."""
    x = RNG.standard_normal((1, 3, 10, 10)).astype(np.float32)
    inits = [numpy_helper.from_array(_ints((4, 3, 3, 3), U8), "w"),
             numpy_helper.from_array(np.uint8(131), "w_zero"),
             numpy_helper.from_array(np.float32(0.015), "w_scale")]  # fmt: skip
    nodes = [
        helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"], name="dq"),
        helper.make_node("ConvInteger", ["xq", "w", "xz", "w_zero"], ["acc"], name="conv",
                         pads=[1, 1, 1, 1]),
        helper.make_node("Cast", ["acc"], ["accf"], to=TensorProto.FLOAT, name="cast"),
        helper.make_node("Mul", ["xs", "w_scale"], ["s"], name="scales"),
        helper.make_node("Mul", ["accf", "s"], ["y"], name="rescale"),
    ]  # fmt: skip
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_empty_tensor_value_info("y")], inits,
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    got, want = stack_run(model, {"x": x}), ort_run(model, {"x": x})
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


def _bad(opset: int = 10, **change: Any) -> onnx.ModelProto:
    """A uint8 1x3x5x5 x, int8 4x3x3x3 w ConvInteger with both zero points, ``change``d:
    arrays by name (x, w, x_zp, w_zp) or attributes."""
    arrays = feeds((1, 3, 5, 5), (4, 3, 3, 3))
    names = ("x", "w", "x_zp", "w_zp")
    arrays.update({k: v for k, v in change.items() if k in names})
    return ci_model(arrays, opset, **{k: v for k, v in change.items() if k not in names})


BAD: dict[str, tuple[onnx.ModelProto, type, str]] = {
    "opset 9": (_bad(9), ModelFormatError, "(opset 10+, model opset 9)"),
    "int32 x": (_bad(x=np.ones((1, 3, 5, 5), np.int32)), ModelFormatError, "int8 or uint8 x and w"),
    "float w": (_bad(w=np.ones((4, 3, 3, 3), np.float32)), ModelFormatError, "int8 or uint8"),
    "x_zero_point int8": (_bad(x_zp=np.array(1, I8)), ModelFormatError, "x_zero_point int8[] must be one uint8"),
    "w_zero_point uint8": (_bad(w_zp=np.array(1, U8)), ModelFormatError, "w_zero_point uint8[] must be one int8"),
    "two x zero points": (_bad(x_zp=np.ones(2, U8)), ModelFormatError, "x_zero_point uint8[2]"),
    "w zero points not M": (_bad(w_zp=np.ones(3, I8)), ModelFormatError, "or [4]: one per output"),
    "2-D w zero point": (_bad(w_zp=np.ones((4, 1), I8)), ModelFormatError, "w_zero_point int8[4, 1]"),
    "w channels": (_bad(w=np.ones((4, 2, 3, 3), I8)), ModelFormatError, "x's 3 channels"),
    "group not dividing M": (_bad(w=np.ones((4, 1, 3, 3), I8), group=3), ModelFormatError, "group 3 disagree"),
    "group 0": (_bad(group=0), ModelFormatError, "group 0 disagree"),
    "kernel_shape not w's": (_bad(kernel_shape=[2, 2]), ModelFormatError, "kernel_shape [2, 2] differs"),
    "strides of one": (_bad(strides=[1]), ModelFormatError, "strides [1] needs 2 values >= 1"),
    "dilations 0": (_bad(dilations=[1, 0]), ModelFormatError, "dilations [1, 0] needs 2 values >= 1"),
    "negative pads": (_bad(pads=[0, -1, 0, 0]), ModelFormatError, "pads [0, -1, 0, 0] needs 4 values >= 0"),
    "auto_pad": (_bad(auto_pad="SAME"), ModelFormatError, "auto_pad 'SAME' is not one of"),
    "kernel larger than x": (_bad(x=np.ones((1, 3, 2, 2), U8)), ModelFormatError, "kernel is larger"),
    "w rank": (_bad(w=np.ones((4, 3, 3), I8)), ModelFormatError, "x's rank"),
    "2-D x": (_bad(x=np.ones((1, 3), U8)), ModelFormatError, "needs N, C and a spatial axis"),
    "3-D x": (_bad(x=np.ones((1, 3, 4, 4, 4), U8), w=np.ones((4, 3, 2, 2, 2), I8)),
              UnsupportedOpError, "3-D spatial input"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(BAD))
def test_bad_conv_integer_is_a_typed_error_naming_the_node(case: str) -> None:
    model, error, words = BAD[case]
    with pytest.raises(error) as err:
        import_model(model)
    assert type(err.value) is error and err.value.node == "n0", err.value
    assert words in str(err.value), str(err.value)
    if error is UnsupportedOpError:
        assert err.value.op_type == "ConvInteger"  # type: ignore[attr-defined]
        assert err.value.layers == ("compiler", "umd", "kmd")  # type: ignore[attr-defined]
    else:
        assert err.value.op == "ConvInteger", err.value


@pytest.mark.parametrize(
    ("inputs", "outputs"),
    [(["x"], ["y"]), (["x", "w", "x_zp", "w_zp", "w_zp"], ["y"]), (["x", ""], ["y"]),
     (["", "w"], ["y"]), (["x", "w"], ["y", "y2"]), (["x", "w"], [""])],
    ids=["one input", "five inputs", "no w", "no x", "two outputs", "unnamed output"],
)  # fmt: skip
def test_missing_or_extra_inputs_or_outputs_are_a_model_format_error(
    inputs: list[str], outputs: list[str]
) -> None:
    model = _bad()
    node = model.graph.node[0]
    del node.input[:], node.output[:]
    node.input.extend(inputs)
    node.output.extend(outputs)
    with pytest.raises(ModelFormatError, match="takes x, w and the optional") as err:
        import_model(model)
    assert err.value.node == "n0"
