"""Conformance of DYNAMIC_QUANTIZE_LINEAR through the KMD, on every available backend, against
ONNX's DynamicQuantizeLinear worked element by element in float32 scalars: mixed-sign, all
positive, all negative, all-zero and empty inputs, ties to even in y and in the zero point,
1-D to 4-D and scalar x; and the kernel's refusal of other dtypes and shapes."""

from __future__ import annotations

import re

import numpy as np
import pytest

from stack.kmd import KernelId
from stack.kmd.errors import FenceFailedError, KernelArgumentError

RNG = np.random.default_rng(52)
F32 = np.float32


def reference(x: np.ndarray) -> tuple[np.ndarray, np.float32, np.uint8]:
    """(y, y_scale, y_zero_point) of ONNX's formulas, one float32 scalar at a time; an empty
    range (all zeros, or no elements) takes the scale 1/255, as ONNX's reference."""
    values = [F32(v) for v in x.ravel()]
    lo, hi = min([F32(0), *values]), max([F32(0), *values])
    scale = (F32(1) if hi == lo else F32(hi - lo)) / F32(255)
    zero = int(np.rint(min(max(F32(0) - lo / scale, F32(0)), F32(255))))
    y = [int(min(max(np.rint(v / scale) + zero, 0), 255)) for v in values]
    return np.array(y, np.uint8).reshape(x.shape), F32(scale), np.uint8(zero)


def run(rig, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:  # type: ignore[no-untyped-def]
    return tuple(  # type: ignore[return-value]
        rig.run_outputs(
            KernelId.DYNAMIC_QUANTIZE_LINEAR,
            [x],
            [(x.shape, np.uint8), ((), np.float32), ((), np.uint8)],
        )
    )


CASES = {
    "mixed 1-D": RNG.standard_normal(17).astype(F32) * 3,
    "mixed 4-D": RNG.standard_normal((2, 3, 4, 5)).astype(F32),
    "positive": RNG.random((6, 7)).astype(F32) + 0.5,
    "negative": -RNG.random((3, 8)).astype(F32) - 0.25,
    "wide range": (RNG.standard_normal((4, 33)) * 1e4).astype(F32),
    "onnx node test": np.array([0, 2, -3, -2.5, 1.34, 0.5], F32),
    "onnx max adjusted": np.array([-1.0, -2.1, -1.3, -2.5, -3.34, -4.0], F32),
    "onnx min adjusted": np.array([[1, 2.1, 1.3, 2.5], [3.34, 4.0, 1.5, 2.6]], F32),
    # range 255, scale 1: x / scale ties at .5 and round to even; zero point exactly 0
    "ties in y": np.array([0.5, 1.5, 2.5, 3.5, 254.5, 255.0], F32),
    # range 255, scale 1: the zero point 127.5 rounds to 128, -127.5 quantises to 0
    "tie in the zero point": np.array([-127.5, -0.5, 0.5, 127.5], F32),
    "zero point tie down": np.array([-0.5, 254.5], F32),
    "scalar": np.array(-2.0, F32),
}


@pytest.mark.parametrize("case", list(CASES))
def test_dynamic_quantize_linear_matches_onnx_formulas(backend_rig, case: str) -> None:  # type: ignore[no-untyped-def]
    x = CASES[case]
    y, scale, zero = run(backend_rig, x)
    ref_y, ref_scale, ref_zero = reference(x)
    assert (y.dtype, scale.dtype, zero.dtype) == (np.uint8, np.float32, np.uint8)
    assert (y.shape, scale.shape, zero.shape) == (x.shape, (), ())
    assert scale.tobytes() == ref_scale.tobytes() and zero == ref_zero
    np.testing.assert_array_equal(y, ref_y)


def test_ties_round_to_even_in_y_and_in_the_zero_point(backend_rig) -> None:  # type: ignore[no-untyped-def]
    y, scale, zero = run(backend_rig, CASES["ties in y"])
    assert (float(scale), int(zero)) == (1.0, 0) and y.tolist() == [0, 2, 2, 4, 254, 255]
    y, scale, zero = run(backend_rig, CASES["tie in the zero point"])
    assert (float(scale), int(zero)) == (1.0, 128) and y.tolist() == [0, 128, 128, 255]
    _, _, zero = run(backend_rig, CASES["zero point tie down"])
    assert int(zero) == 0


def test_the_zero_point_is_0_for_positive_and_255_for_negative_inputs(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x = np.array([1.0, 2.0, 3.0], F32)
    y, scale, zero = run(backend_rig, x)
    assert (y.tolist(), int(zero)) == ([85, 170, 255], 0)
    assert scale == F32(3.0) / F32(255)
    y, scale, zero = run(backend_rig, -x)
    assert (y.tolist(), int(zero)) == ([170, 85, 0], 255)


@pytest.mark.parametrize("shape", [(2, 3), (0,), (4, 0, 2)])
def test_an_empty_range_takes_the_scale_one_over_255(backend_rig, shape) -> None:  # type: ignore[no-untyped-def]
    """All zeros or no elements: min and max are both 0, so ONNX's range is empty; the scale is
    1/255 (ONNX's reference; onnxruntime gives 1), the zero point 0 and every y 0."""
    x = np.zeros(shape, F32)
    y, scale, zero = run(backend_rig, x)
    assert scale.tobytes() == (F32(1) / F32(255)).tobytes() and int(zero) == 0
    assert y.shape == shape and not y.any()


@pytest.mark.parametrize(
    ("x", "outputs"),
    [
        (np.ones(4, np.float64), [((4,), np.uint8), ((), np.float32), ((), np.uint8)]),
        (np.ones(4, F32), [((4,), np.int8), ((), np.float32), ((), np.uint8)]),
        (np.ones(4, F32), [((4,), np.uint8), ((), np.float16), ((), np.uint8)]),
        (np.ones(4, F32), [((4,), np.uint8), ((), np.float32), ((), np.int32)]),
        (np.ones(4, F32), [((2, 2), np.uint8), ((), np.float32), ((), np.uint8)]),
        (np.ones(4, F32), [((4,), np.uint8), ((2,), np.float32), ((), np.uint8)]),
        (np.ones(4, F32), [((4,), np.uint8), ((), np.float32), ((0,), np.uint8)]),
    ],
    ids=["x float64", "y int8", "scale float16", "zero point int32", "y shape", "two scales",
         "no zero point"],
)  # fmt: skip
def test_other_dtypes_and_shapes_are_a_fault(rig, x, outputs) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(FenceFailedError, match="DynamicQuantizeLinear"):
        rig.run_outputs(KernelId.DYNAMIC_QUANTIZE_LINEAR, [x], outputs)


def test_a_wrong_output_count_is_refused_at_submit(rig) -> None:  # type: ignore[no-untyped-def]
    """Two outputs where the ABI has three: the KMD refuses the blob before queuing it."""
    message = "DYNAMIC_QUANTIZE_LINEAR takes 1..1 inputs + 3 outputs, got 3 params"
    with pytest.raises(KernelArgumentError, match=re.escape(message)):
        rig.run_outputs(
            KernelId.DYNAMIC_QUANTIZE_LINEAR, [np.ones(4, F32)], [((4,), np.uint8), ((), F32)]
        )
