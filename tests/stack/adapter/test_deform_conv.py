"""DeformConv through the whole stack against onnxruntime (and ONNX's reference), and its bad
input as typed errors naming the node.

Batch and channels > 1; strides, pads, dilations, groups and offset groups on their own and
together; bias and mask, either, both or neither (a mask without a bias too); offsets that
move taps outside X; float32, float64 and float16; opsets 19 and 22; a zero offset giving
Conv's result; the ONNX node tests' shapes."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import pytest
from onnx.reference import ReferenceEvaluator

from stack.adapter import import_model
from stack.adapter.errors import ModelFormatError, UnsupportedOpError
from tests.stack.adapter.both import node_model, ort_run, stack_run

RNG = np.random.default_rng(50)
TOL = {np.float32: 1e-4, np.float64: 1e-9, np.float16: 2e-2}


def deform_model(
    arrays: dict[str, np.ndarray], opset: int = 19, skip_bias: bool = False, **attrs: Any
) -> onnx.ModelProto:
    """One DeformConv of the named inputs (x, w, o[, b][, m]); ``skip_bias``: the mask is given
    without a bias (an empty input name in its place)."""
    model = node_model("DeformConv", arrays, opset, **attrs)
    if skip_bias:
        node = model.graph.node[0]
        ins = list(node.input)
        del node.input[:]
        node.input.extend([*ins[:3], "", *ins[3:]])
    return model


def feeds(xs, ws, dtype=np.float32, bias=True, mask=True, spread=1.5, **attrs):  # type: ignore[no-untyped-def]
    """Random X, W, offset (taps moved by about ``spread`` pixels), B and mask for the shapes
    and attributes."""
    s, p = attrs.get("strides", [1, 1]), attrs.get("pads", [0, 0, 0, 0])
    d, og = attrs.get("dilations", [1, 1]), attrs.get("offset_group", 1)
    hw = [(xs[2 + i] + p[i] + p[2 + i] - d[i] * (ws[2 + i] - 1) - 1) // s[i] + 1 for i in range(2)]
    k = og * ws[2] * ws[3]
    out = {
        "x": RNG.standard_normal(xs).astype(dtype),
        "w": RNG.standard_normal(ws).astype(dtype),
        "o": (spread * RNG.standard_normal((xs[0], 2 * k, *hw))).astype(dtype),
    }
    if bias:
        out["b"] = RNG.standard_normal(ws[0]).astype(dtype)
    if mask:
        out["m"] = RNG.random((xs[0], k, *hw)).astype(dtype)
    return out


CASES = {  # (X shape, W shape, bias, mask, attributes)
    "onnx basic": ((1, 1, 3, 3), (1, 1, 2, 2), False, False, {}),
    "onnx padding": ((1, 1, 3, 3), (1, 1, 2, 2), False, False, {"pads": [1, 1, 1, 1]}),
    "onnx mask bias": ((1, 1, 3, 3), (1, 1, 2, 2), True, True, {"pads": [1, 1, 1, 1]}),
    "onnx offset groups": ((1, 2, 3, 3), (1, 2, 2, 2), False, False,
                           {"pads": [1, 1, 1, 1], "offset_group": 2}),
    "bias and mask": ((2, 3, 6, 7), (4, 3, 3, 3), True, True, {}),
    "mask only": ((2, 3, 6, 5), (4, 3, 3, 3), False, True, {"pads": [1, 1, 1, 1]}),
    "bias only": ((1, 2, 5, 5), (3, 2, 3, 3), True, False, {}),
    "strides": ((1, 2, 9, 8), (3, 2, 3, 2), True, True, {"strides": [2, 3]}),
    "dilations": ((1, 2, 8, 9), (2, 2, 2, 3), True, False, {"dilations": [3, 2]}),
    "groups": ((2, 4, 6, 6), (6, 2, 3, 3), True, True, {"group": 2}),
    "all together": ((2, 6, 9, 8), (4, 3, 3, 2), True, True,
                     {"strides": [2, 1], "pads": [1, 0, 2, 1], "dilations": [1, 2], "group": 2,
                      "offset_group": 3}),
}  # fmt: skip


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
@pytest.mark.parametrize("case", list(CASES))
def test_deform_conv_matches_onnxruntime(case: str, dtype: type) -> None:
    xs, ws, bias, mask, attrs = CASES[case]
    arrays = feeds(xs, ws, dtype, bias, mask, **attrs)
    model = deform_model(arrays, skip_bias=mask and not bias, **attrs)
    got, ref = stack_run(model, arrays), ort_run(model, arrays)
    assert got.dtype == dtype and got.shape == ref.shape
    scale = max(1.0, float(np.abs(ref.astype(np.float64)).max()))
    np.testing.assert_allclose(got, ref, rtol=TOL[dtype], atol=TOL[dtype] * scale)


@pytest.mark.parametrize("case", ["bias and mask", "mask only", "all together"])
def test_deform_conv_matches_the_onnx_reference(case: str) -> None:
    """ONNX's reference samples through its GridSample, whose pixel places are float32 (after a
    round trip through normalised coordinates): it agrees to about 1e-6, onnxruntime's double
    kernel to 1e-9."""
    xs, ws, bias, mask, attrs = CASES[case]
    arrays = feeds(xs, ws, np.float64, bias, mask, spread=3.0, **attrs)
    model = deform_model(arrays, skip_bias=mask and not bias, **attrs)
    (ref,) = ReferenceEvaluator(model).run(None, arrays)
    np.testing.assert_allclose(stack_run(model, arrays), ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("opset", [19, 22])
def test_a_zero_offset_is_conv(opset: int) -> None:
    attrs = {"strides": [2, 1], "pads": [1, 1, 0, 1], "dilations": [1, 2], "group": 2}
    arrays = feeds((2, 4, 7, 6), (6, 2, 3, 2), np.float32, True, False, **attrs)
    arrays["o"][...] = 0
    got = stack_run(deform_model(arrays, opset, **attrs), arrays)
    conv = node_model("Conv", {k: arrays[k] for k in ("x", "w", "b")}, opset, **attrs)
    want = ort_run(conv, {k: arrays[k] for k in ("x", "w", "b")})
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def _bad(opset: int = 19, **change: Any) -> onnx.ModelProto:
    """A 2x3x5x5 X, 4x3x3x3 W, 18-channel offset and bias DeformConv, ``change``d: arrays by
    name (x, w, o, b, m) or attributes."""
    arrays = feeds((1, 3, 5, 5), (4, 3, 3, 3), np.float32, True, False)
    attrs = {k: v for k, v in change.items() if k not in "xwobm"}
    arrays.update({k: v for k, v in change.items() if k in "xwobm"})
    return deform_model(arrays, opset, **attrs)


_F = np.float32
BAD: dict[str, tuple[onnx.ModelProto, type]] = {
    "opset 18": (_bad(18), ModelFormatError),
    "integer X": (_bad(x=np.ones((1, 3, 5, 5), np.int32)), ModelFormatError),
    "float64 W": (_bad(w=np.ones((4, 3, 3, 3))), ModelFormatError),
    "3-D W": (_bad(w=np.ones((4, 3, 3), _F)), ModelFormatError),
    "W channels": (_bad(w=np.ones((4, 2, 3, 3), _F)), ModelFormatError),
    "group not dividing oC": (_bad(w=np.ones((4, 1, 3, 3), _F), group=3), ModelFormatError),
    "group 0": (_bad(group=0), ModelFormatError),
    "offset_group not dividing C": (
        _bad(offset_group=2, o=np.ones((1, 36, 3, 3), _F)),
        ModelFormatError,
    ),
    "kernel_shape not W's": (_bad(kernel_shape=[2, 2]), ModelFormatError),
    "strides of one": (_bad(strides=[1]), ModelFormatError),
    "dilations 0": (_bad(dilations=[1, 0]), ModelFormatError),
    "negative pads": (_bad(pads=[0, -1, 0, 0]), ModelFormatError),
    "offset channels": (_bad(o=np.ones((1, 16, 3, 3), _F)), ModelFormatError),
    "offset places": (_bad(o=np.ones((1, 18, 3, 4), _F)), ModelFormatError),
    "bias length": (_bad(b=np.ones(3, _F)), ModelFormatError),
    "mask channels": (_bad(m=np.ones((1, 18, 3, 3), _F)), ModelFormatError),
    "kernel larger than X": (_bad(x=np.ones((1, 3, 2, 2), _F)), ModelFormatError),
    "2-D X": (_bad(x=np.ones((1, 3), _F)), ModelFormatError),
    "1-D X": (
        _bad(x=np.ones((1, 3, 5), _F), w=np.ones((4, 3, 3), _F), o=np.ones((1, 6, 3), _F)),
        UnsupportedOpError,
    ),
    "3-D X": (
        _bad(
            x=np.ones((1, 3, 4, 4, 4), _F),
            w=np.ones((4, 3, 2, 2, 2), _F),
            o=np.ones((1, 24, 3, 3, 3), _F),
        ),
        UnsupportedOpError,
    ),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_deform_conv_is_a_typed_error_naming_the_node(case: str) -> None:
    model, error = BAD[case]
    with pytest.raises(error) as err:
        import_model(model)
    assert type(err.value) is error
    assert err.value.node == "n0", err.value
    if error is UnsupportedOpError:
        assert err.value.op_type == "DeformConv"  # type: ignore[attr-defined]
        assert "compiler" in err.value.layers  # type: ignore[attr-defined]
    else:
        assert err.value.op == "DeformConv", err.value


@pytest.mark.parametrize(
    "inputs", [["x", "w"], ["x", "w", "o", "b", "b", "b"], ["x", "", "o"], ["", "w", "o"]]
)
def test_missing_or_extra_inputs_are_a_model_format_error(inputs: list[str]) -> None:
    model = _bad()
    node = model.graph.node[0]
    del node.input[:]
    node.input.extend(inputs)
    with pytest.raises(ModelFormatError, match="takes X, W, offset") as err:
        import_model(model)
    assert err.value.node == "n0"


def test_a_mask_without_a_bias_is_given_a_zero_bias() -> None:
    arrays = feeds((1, 2, 4, 4), (3, 2, 2, 2), np.float32, False, True)
    graph = import_model(deform_model(arrays, skip_bias=True))
    (node,) = [n for n in graph.nodes if n.op.value == "DeformConv"]
    assert len(node.inputs) == 5 and node.inputs[4] == "m"
    np.testing.assert_array_equal(graph.constants[node.inputs[3]], np.zeros(3, np.float32))
