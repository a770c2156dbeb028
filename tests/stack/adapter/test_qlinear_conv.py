# ruff: noqa: E501 - the case table of bad models reads best one case per line
"""QLinearConv through the whole stack against onnxruntime and ONNX's reference, exactly (int8 /
uint8), and its bad input as typed errors naming the node.

onnxruntime's three dtype pairings (uint8 x with int8 or uint8 w, int8 x with int8 w, y of x's
type); the others (int8 x with uint8 w, a y of another type than x) against ONNX's reference,
which runs them; w's scale and zero point per tensor and per output channel; with and without
the bias; ConvInteger's shapes (strides, pads, dilations, groups, depthwise, auto_pad
SAME_UPPER, SAME_LOWER and VALID, 1-D promoted to 2-D); opsets 10, 13 and 21 with constant
weights; the ONNX node test's data; a statically quantised Conv (QuantizeLinear ->
QLinearConv -> DequantizeLinear) bit for bit; the two places where onnxruntime and ONNX's
reference disagree — a tie with an odd y_zero_point, an accumulator beyond float32's 2^24 —
answered as onnxruntime; a 3-D convolution refused naming the layers."""

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

RNG = np.random.default_rng(54)
I8, U8, F32, I32 = np.int8, np.uint8, np.float32, np.int32
#: The inputs in ONNX's order, by the names the tests give them.
NAMES = ("x", "x_scale", "x_zp", "w", "w_scale", "w_zp", "y_scale", "y_zp", "B")


def _ints(shape: tuple[int, ...], dtype: type) -> np.ndarray:
    info = np.iinfo(dtype)
    return RNG.integers(info.min, info.max + 1, shape).astype(dtype)


def feeds(xs, ws, dtypes=(U8, I8, U8), per="tensor", bias=True):  # type: ignore[no-untyped-def]
    """Random x, w, zero points and B of the shapes and dtypes (x, w, y); w's scale and zero
    point ``per`` tensor or channel; y_scale (and B) set from w's taps so that y spreads tens
    of steps either side of y_zero_point (and saturates at times)."""
    m = ws[0]
    shape = (m,) if per == "channel" else ()
    out = {"x": _ints(xs, dtypes[0]), "x_scale": np.array(0.02, F32), "x_zp": _ints((), dtypes[0]),
           "w": _ints(ws, dtypes[1]), "w_scale": RNG.uniform(0.002, 0.02, shape).astype(F32),
           "w_zp": _ints(shape, dtypes[1])}  # fmt: skip
    taps = int(np.prod(ws[1:]))
    out["y_scale"] = np.array(0.02 * out["w_scale"].max() * 255 * 255 * taps**0.5 / 200, F32)
    out["y_zp"] = _ints((), dtypes[2])
    if bias:
        out["B"] = RNG.integers(-5000, 5000, (m,)).astype(I32) * int(taps**0.5)
    return out


def qc_model(arrays: dict[str, np.ndarray], opset: int = 10, consts=(), **attrs: Any):  # type: ignore[no-untyped-def]
    return node_model("QLinearConv", arrays, opset, consts, **attrs)


def assert_exact(got: np.ndarray, want: np.ndarray) -> None:
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    np.testing.assert_array_equal(got, want)


def reference(model: onnx.ModelProto, arrays: dict[str, np.ndarray]) -> np.ndarray:
    (want,) = ReferenceEvaluator(model).run(None, arrays)
    return np.asarray(want)


CASES = {  # (x shape, w shape, attributes): ConvInteger's
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
ORT_TYPES = [(U8, I8, U8), (U8, U8, U8), (I8, I8, I8)]
ORT_IDS = ["u8-i8-u8", "u8-u8-u8", "i8-i8-i8"]


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("dtypes", ORT_TYPES, ids=ORT_IDS)
@pytest.mark.parametrize("per", ["tensor", "channel"])
@pytest.mark.parametrize("bias", [False, True], ids=["no bias", "bias"])
def test_qlinear_conv_matches_onnxruntime(case: str, dtypes: tuple, per: str, bias: bool) -> None:
    xs, ws, attrs = CASES[case]
    arrays = feeds(xs, ws, dtypes, per, bias)
    model = qc_model(arrays, **attrs)
    assert_exact(stack_run(model, arrays), ort_run(model, arrays))


REFERENCE_TYPES = [(I8, U8, I8), (U8, I8, I8), (I8, I8, U8), (I8, U8, U8)]


@pytest.mark.parametrize("case", [c for c in CASES if not c.startswith("1-D")])
@pytest.mark.parametrize(
    "dtypes", REFERENCE_TYPES, ids=["i8-u8-i8", "u8-i8-i8", "i8-i8-u8", "i8-u8-u8"]
)
@pytest.mark.parametrize("per", ["tensor", "channel"])
def test_the_pairings_onnxruntime_lacks_match_the_onnx_reference(
    case: str, dtypes: tuple, per: str
) -> None:
    """ONNX types x, w and y apart; onnxruntime's CPU kernel has no int8 x with uint8 w nor a y
    of another type than x. (ONNX's reference cannot run a 1-D case with w's scale per channel:
    it shapes the scale for 2-D.)"""
    xs, ws, attrs = CASES[case]
    arrays = feeds(xs, ws, dtypes, per)
    model = qc_model(arrays, **attrs)
    assert_exact(stack_run(model, arrays), reference(model, arrays))


@pytest.mark.parametrize("case", list(CASES))
def test_qlinear_conv_matches_the_onnx_reference(case: str) -> None:
    xs, ws, attrs = CASES[case]
    arrays = feeds(xs, ws)
    model = qc_model(arrays, **attrs)
    assert_exact(stack_run(model, arrays), reference(model, arrays))


@pytest.mark.parametrize("opset", [10, 13, 21])
def test_constant_weights_scales_zero_points_and_bias_at_every_opset(opset: int) -> None:
    """The usual quantised model: everything but x initializers, w's scale per channel."""
    arrays = feeds((2, 3, 8, 8), (4, 3, 3, 3), per="channel")
    consts = tuple(n for n in NAMES if n != "x")
    model = qc_model(arrays, opset, consts, pads=[1, 1, 1, 1], strides=[2, 2])
    x = {"x": arrays["x"]}
    assert_exact(stack_run(model, x), ort_run(model, x))


def test_the_onnx_node_tests_data() -> None:
    """test_qlinearconv: a 1x1 kernel of one zero weight less its zero point 255; w's scale
    and zero point one-element vectors."""
    x = np.array([[255, 174, 162, 25, 203, 168, 58], [15, 59, 237, 95, 129, 0, 64],
                  [56, 242, 153, 221, 168, 12, 166], [232, 178, 186, 195, 237, 162, 237],
                  [188, 39, 124, 77, 80, 102, 43], [127, 230, 21, 83, 41, 40, 134],
                  [255, 154, 92, 141, 42, 148, 247]], U8).reshape(1, 1, 7, 7)  # fmt: skip
    arrays = {"x": x, "x_scale": np.array(0.00369204697, F32), "x_zp": np.array(132, U8),
              "w": np.zeros((1, 1, 1, 1), U8), "w_scale": np.array([0.00172794575], F32),
              "w_zp": np.array([255], U8), "y_scale": np.array(0.00162681262, F32),
              "y_zp": np.array(123, U8)}  # fmt: skip
    got = stack_run(qc_model(arrays), arrays)
    assert got[0, 0].tolist() == [
        [0, 81, 93, 230, 52, 87, 197], [240, 196, 18, 160, 126, 255, 191],
        [199, 13, 102, 34, 87, 243, 89], [23, 77, 69, 60, 18, 93, 18],
        [67, 216, 131, 178, 175, 153, 212], [128, 25, 234, 172, 214, 215, 121],
        [0, 101, 163, 114, 213, 107, 8],
    ]  # fmt: skip


def test_an_empty_bias_name_is_no_bias() -> None:
    arrays = feeds((1, 2, 5, 5), (3, 2, 3, 3), bias=False)
    model = qc_model(arrays)
    model.graph.node[0].input.append("")
    (conv,) = import_model(model).nodes
    assert conv.op is OpType.QLINEARCONV and len(conv.inputs) == 8
    assert_exact(stack_run(model, arrays), ort_run(model, arrays))


def test_a_statically_quantised_conv_matches_onnxruntime_bit_for_bit() -> None:
    """onnxruntime's QOperator form of a quantised Conv: QuantizeLinear of the activation,
    QLinearConv with int8 weights per output channel and an int32 bias, DequantizeLinear."""
    x = RNG.standard_normal((1, 3, 10, 10)).astype(F32)
    inits = [numpy_helper.from_array(a, n) for n, a in (
        ("x_scale", np.array(0.03, F32)), ("x_zp", np.array(128, U8)),
        ("w", _ints((4, 3, 3, 3), I8)), ("w_scale", np.array([0.004, 0.002, 0.003, 0.005], F32)),
        ("w_zp", np.zeros(4, I8)), ("y_scale", np.array(0.25, F32)), ("y_zp", np.array(120, U8)),
        ("B", RNG.integers(-2000, 2000, (4,)).astype(I32)),
    )]  # fmt: skip
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zp"], ["xq"], name="q"),
        helper.make_node("QLinearConv", ["xq", *NAMES[1:]], ["yq"], name="conv", pads=[1, 1, 1, 1]),
        helper.make_node("DequantizeLinear", ["yq", "y_scale", "y_zp"], ["y"], name="dq"),
    ]  # fmt: skip
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_empty_tensor_value_info("y")], inits,
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    got, want = stack_run(model, {"x": x}), ort_run(model, {"x": x})
    assert got.dtype == want.dtype and got.tobytes() == want.tobytes()


def _one_tap(values: list[int], y_scale: float, y_zp: int) -> dict[str, np.ndarray]:
    """A 1x1 convolution of x = ``values`` (int8, zero point 0) by one weight 1, all scales 1
    but y's: each output is value / y_scale, requantised."""
    one, zero = np.array(1.0, F32), np.array(0, I8)
    return {"x": np.array(values, I8).reshape(1, 1, 1, -1), "x_scale": one, "x_zp": zero,
            "w": np.ones((1, 1, 1, 1), I8), "w_scale": one, "w_zp": zero,
            "y_scale": np.array(y_scale, F32), "y_zp": np.array(y_zp, I8)}  # fmt: skip


def test_a_tie_rounds_to_even_before_the_zero_point_as_onnxruntime() -> None:
    """acc · scale = -2.5 .. 3.5 with y_zero_point 3: onnxruntime rounds, then adds the zero
    point (1 1 3 3 5 5 7); ONNX's reference adds it first and rounds 0.5 .. 6.5 (0 2 2 4 4 6 6).
    The stack answers as onnxruntime (ONNX's operator text gives no formula)."""
    arrays = _one_tap([-5, -3, -1, 1, 3, 5, 7], 2.0, 3)
    model = qc_model(arrays)
    got = stack_run(model, arrays)
    assert got.ravel().tolist() == ort_run(model, arrays).ravel().tolist() == [1, 1, 3, 3, 5, 5, 7]
    assert reference(model, arrays).ravel().tolist() == [0, 2, 2, 4, 4, 6, 6]


def test_an_accumulator_beyond_float32s_2_24_is_scaled_in_float32_as_onnxruntime() -> None:
    """255 · 255 · 2048 + B 260 099 = 133 431 299: onnxruntime converts it to float32
    (133 431 296) before scaling by 2^-19, giving the tie 254.5 -> 254; ONNX's reference scales
    in float64 (254.500 005 7 -> 255)."""
    arrays = {"x": np.zeros((1, 128, 4, 4), U8), "x_scale": np.array(1.0, F32),
              "x_zp": np.array(255, U8), "w": np.full((1, 128, 4, 4), -128, I8),
              "w_scale": np.array(1.0, F32), "w_zp": np.array(127, I8),
              "y_scale": np.array(2.0**19, F32), "y_zp": np.array(0, U8),
              "B": np.array([260_099], I32)}  # fmt: skip
    model = qc_model(arrays)
    assert (
        stack_run(model, arrays).ravel().tolist()
        == ort_run(model, arrays).ravel().tolist()
        == [254]
    )
    assert reference(model, arrays).ravel().tolist() == [255]


def _bad(opset: int = 10, **change: Any) -> onnx.ModelProto:
    """A uint8 1x3x5x5 x, int8 4x3x3x3 w QLinearConv with a bias, ``change``d: arrays by name
    (x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B) or attributes."""
    arrays = feeds((1, 3, 5, 5), (4, 3, 3, 3))
    arrays.update({k: v for k, v in change.items() if k in NAMES})
    return qc_model(arrays, opset, **{k: v for k, v in change.items() if k not in NAMES})


BAD: dict[str, tuple[onnx.ModelProto, type, str]] = {
    "opset 9": (_bad(9), ModelFormatError, "(opset 10+, model opset 9)"),
    "int32 x": (_bad(x=np.ones((1, 3, 5, 5), I32)), ModelFormatError, "int8 or uint8 x and w"),
    "float w": (_bad(w=np.ones((4, 3, 3, 3), F32)), ModelFormatError, "int8 or uint8"),
    "x_scale float64": (_bad(x_scale=np.array(0.5)), ModelFormatError, "x_scale float64[] must be one float32 (a scalar)"),
    "two x scales": (_bad(x_scale=np.ones(2, F32)), ModelFormatError, "x_scale float32[2] must be one float32"),
    "x_zero_point int8": (_bad(x_zp=np.array(1, I8)), ModelFormatError, "x_zero_point int8[] must be one uint8"),
    "w_scale not M": (_bad(w_scale=np.ones(3, F32)), ModelFormatError, "w_scale float32[3] must be one float32, or [4]: one per output"),
    "2-D w_scale": (_bad(w_scale=np.ones((4, 1), F32)), ModelFormatError, "w_scale float32[4, 1]"),
    "w_zero_point uint8": (_bad(w_zp=np.array(1, U8)), ModelFormatError, "w_zero_point uint8[] must be one int8"),
    "w zero points not M": (_bad(w_zp=np.ones(2, I8)), ModelFormatError, "w_zero_point int8[2] must be one int8, or [4]"),
    "y_scale float16": (_bad(y_scale=np.array(1, np.float16)), ModelFormatError, "y_scale float16[] must be one float32"),
    "y_zero_point int32": (_bad(y_zp=np.array(1, I32)), ModelFormatError, "y_zero_point int32[] must be int8 or uint8"),
    "two y zero points": (_bad(y_zp=np.ones(2, U8)), ModelFormatError, "y_zero_point uint8[2] must be one uint8"),
    "B int64": (_bad(B=np.zeros(4, np.int64)), ModelFormatError, "B int64[4] must be int32 [4]"),
    "B not M": (_bad(B=np.zeros(5, I32)), ModelFormatError, "B int32[5] must be int32 [4]: one per output channel"),
    "w channels": (_bad(w=np.ones((4, 2, 3, 3), I8)), ModelFormatError, "x's 3 channels"),
    "group not dividing M": (_bad(w=np.ones((4, 1, 3, 3), I8), group=3), ModelFormatError, "group 3 disagree"),
    "kernel_shape not w's": (_bad(kernel_shape=[2, 2]), ModelFormatError, "kernel_shape [2, 2] differs"),
    "strides of one": (_bad(strides=[1]), ModelFormatError, "strides [1] needs 2 values >= 1"),
    "dilations 0": (_bad(dilations=[0, 1]), ModelFormatError, "dilations [0, 1] needs 2 values >= 1"),
    "negative pads": (_bad(pads=[0, -1, 0, 0]), ModelFormatError, "pads [0, -1, 0, 0] needs 4 values >= 0"),
    "auto_pad": (_bad(auto_pad="SAME"), ModelFormatError, "auto_pad 'SAME' is not one of"),
    "kernel larger than x": (_bad(x=np.ones((1, 3, 2, 2), U8)), ModelFormatError, "kernel is larger"),
    "w rank": (_bad(w=np.ones((4, 3, 3), I8)), ModelFormatError, "x's rank"),
    "2-D x": (_bad(x=np.ones((1, 3), U8)), ModelFormatError, "needs N, C and a spatial axis"),
    "3-D x": (_bad(x=np.ones((1, 3, 4, 4, 4), U8), w=np.ones((4, 3, 2, 2, 2), I8)),
              UnsupportedOpError, "3-D spatial input"),
}  # fmt: skip


@pytest.mark.parametrize("case", list(BAD))
def test_bad_qlinear_conv_is_a_typed_error_naming_the_node(case: str) -> None:
    model, error, words = BAD[case]
    with pytest.raises(error) as err:
        import_model(model)
    assert type(err.value) is error and err.value.node == "n0", err.value
    assert words in str(err.value), str(err.value)
    if error is UnsupportedOpError:
        assert err.value.op_type == "QLinearConv"  # type: ignore[attr-defined]
        assert err.value.layers == ("compiler", "umd", "kmd")  # type: ignore[attr-defined]
    else:
        assert err.value.op == "QLinearConv", err.value


def _without(i: int) -> list[str]:
    return [("" if j == i else n) for j, n in enumerate(NAMES)]


@pytest.mark.parametrize(
    ("inputs", "outputs"),
    [(list(NAMES[:7]), ["y"]), ([*NAMES, "B"], ["y"]), (_without(2), ["y"]), (_without(3), ["y"]),
     (_without(7), ["y"]), (list(NAMES), ["y", "y2"]), (list(NAMES), [""])],
    ids=["seven inputs", "ten inputs", "no x_zero_point", "no w", "no y_zero_point",
         "two outputs", "unnamed output"],
)  # fmt: skip
def test_missing_or_extra_inputs_or_outputs_are_a_model_format_error(
    inputs: list[str], outputs: list[str]
) -> None:
    model = _bad()
    node = model.graph.node[0]
    del node.input[:], node.output[:]
    node.input.extend(inputs)
    node.output.extend(outputs)
    with pytest.raises(ModelFormatError, match="takes x, x_scale, x_zero_point, w") as err:
        import_model(model)
    assert err.value.node == "n0"
