# ruff: noqa: E501 - the case tables read best one case per line
"""Conformance of CAUSAL_CONV_WITH_STATE through the KMD, on every available backend, against a
loop over the places (the taps summed in order in Python's float64 arithmetic on the values the
kernel reads, the bias added, SiLU applied, rounded once to the dtype: the kernel must agree to
one unit in the last place of float32 and float16, and to a few of float64, whose exponential
NumPy, CuPy and the C library may round differently): K = 1 to 5, with and without bias and
past_state, each activation, float32, float16 and float64, a length shorter than the state,
batch 1 and channel 1; present_state bit for bit; NaN and infinity, empty tensors; and the
kernel's refusal of operands of another dtype or shape and of an unknown activation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from stack.kmd import KernelId
from stack.kmd.errors import FenceFailedError
from stack.kmd.kernels.causal_conv_with_state import CausalConvActivation

K = KernelId.CAUSAL_CONV_WITH_STATE
RNG = np.random.default_rng(62)
DTYPES = [np.float32, np.float16, np.float64]
#: Units in the last place allowed per dtype: one rounding, or float64's own exp and sums.
MAXULP = {np.dtype(np.float32): 1, np.dtype(np.float16): 1, np.dtype(np.float64): 4}
NONE, SILU = int(CausalConvActivation.NONE), int(CausalConvActivation.SILU)


def silu(t: float) -> float:
    """t * sigmoid(t), the exponential never of a positive argument."""
    if math.isnan(t):
        return t
    e = math.exp(-abs(t))
    return t * (1 / (1 + e) if t >= 0 else e / (1 + e))


def loop(x, w, bias, past, act):  # type: ignore[no-untyped-def]
    """output and present_state place by place: output in float64 rounded once, the state the
    padded input's last K - 1 positions."""
    n, c, length = x.shape
    k = w.shape[2]
    if past is None:
        past = np.zeros((n, c, k - 1), x.dtype)
    padded = np.concatenate([past, x], axis=2)
    y = np.empty(x.shape, np.float64)
    for b, ch, t in np.ndindex(x.shape):
        acc = float(w[ch, 0, 0]) * float(padded[b, ch, t])
        for j in range(1, k):
            acc += float(w[ch, 0, j]) * float(padded[b, ch, t + j])
        if bias is not None:
            acc += float(bias[ch])
        y[b, ch, t] = silu(acc) if act == SILU else acc
    with np.errstate(all="ignore"):
        return y.astype(x.dtype), padded[:, :, length:]


def run(rig, x, w, bias=None, past=None, act=None):  # type: ignore[no-untyped-def]
    """The kernel's output and present_state (a past_state without a bias takes a zero one)."""
    n, c, _ = x.shape
    k = w.shape[2]
    if past is not None and bias is None:
        bias = np.zeros(c, x.dtype)
    ins = [x, w] + [t for t in (bias, past) if t is not None]
    ints = () if act is None else (act,)
    return rig.run_outputs(K, ins, [(x.shape, x.dtype), ((n, c, k - 1), x.dtype)], ints)


def assert_matches(got: list[np.ndarray], want: tuple[np.ndarray, np.ndarray]) -> None:
    y, state = got
    assert y.dtype == want[0].dtype and y.shape == want[0].shape
    np.testing.assert_array_max_ulp(y, want[0], maxulp=MAXULP[y.dtype])
    assert state.dtype == want[1].dtype and state.shape == want[1].shape
    assert state.tobytes() == want[1].tobytes()


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("act", [NONE, SILU], ids=["none", "silu"])
@pytest.mark.parametrize("operands", ["plain", "bias", "past", "bias_past"])
@pytest.mark.parametrize(
    ("shape", "k"),
    [((2, 3, 7), 4), ((1, 1, 5), 3), ((2, 4, 2), 5), ((3, 2, 6), 1), ((1, 5, 1), 4)],
    ids=str,
)
def test_causal_conv_matches_the_loop(backend_rig, shape, k, operands, act, dtype) -> None:  # type: ignore[no-untyped-def]
    n, c, _ = shape
    x = RNG.standard_normal(shape).astype(dtype)
    w = RNG.standard_normal((c, 1, k)).astype(dtype)
    bias = RNG.standard_normal(c).astype(dtype) if "bias" in operands else None
    past = RNG.standard_normal((n, c, k - 1)).astype(dtype) if "past" in operands else None
    assert_matches(run(backend_rig, x, w, bias, past, act), loop(x, w, bias, past, act))


def test_activation_defaults_to_none(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x, w = (
        RNG.standard_normal((2, 3, 6)).astype(np.float32),
        RNG.standard_normal((3, 1, 4)).astype(np.float32),
    )
    got, want = run(backend_rig, x, w), run(backend_rig, x, w, act=NONE)
    assert all(g.tobytes() == v.tobytes() for g, v in zip(got, want, strict=True))


def test_two_decode_steps_carry_the_state_as_one_prefill(backend_rig) -> None:  # type: ignore[no-untyped-def]
    """Prefill 5 positions, then decode 1 with the state it left: the same as prefilling 6."""
    x = RNG.standard_normal((2, 3, 6)).astype(np.float64)
    w = RNG.standard_normal((3, 1, 4)).astype(np.float64)
    bias = RNG.standard_normal(3).astype(np.float64)
    whole, whole_state = run(backend_rig, x, w, bias, act=SILU)
    first, state = run(backend_rig, x[:, :, :5].copy(), w, bias, act=SILU)
    step, step_state = run(backend_rig, x[:, :, 5:].copy(), w, bias, state, act=SILU)
    np.testing.assert_array_equal(np.concatenate([first, step], axis=2), whole)
    np.testing.assert_array_equal(step_state, whole_state)


def test_nan_and_infinity_follow_ieee(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x = np.array([[[np.nan, 1.0, np.inf, 2.0, 3.0]]], np.float32)
    w = np.ones((1, 1, 2), np.float32)
    y, state = run(backend_rig, x, w)
    assert np.isnan(y[0, 0, :2]).all() and y[0, 0, 2] == np.inf and y[0, 0, 3] == np.inf
    assert y[0, 0, 4] == 5.0 and state[0, 0, 0] == 3.0
    silu_y, _ = run(backend_rig, -x, w, act=SILU)
    assert np.isnan(silu_y[0, 0, :3]).all()  # -inf * sigmoid(-inf): -inf * 0, as ONNX's reference
    assert silu_y[0, 0, 4] == np.float32(-5.0 / (1 + math.exp(5.0)))


@pytest.mark.parametrize(("shape", "k"), [((2, 3, 0), 3), ((0, 3, 4), 3), ((2, 0, 4), 2)], ids=str)
def test_empty_tensors_write_nothing_but_the_state(backend_rig, shape, k) -> None:  # type: ignore[no-untyped-def]
    n, c, _ = shape
    x = np.zeros(shape, np.float32)
    past = RNG.standard_normal((n, c, k - 1)).astype(np.float32)
    y, state = run(backend_rig, x, np.ones((c, 1, k), np.float32), np.zeros(c, np.float32), past)
    assert y.shape == shape and state.tobytes() == past.tobytes()


F = np.float32


def _outs(n: int = 1, c: int = 2, length: int = 4, k: int = 3, dtype=F) -> list:  # type: ignore[no-untyped-def]
    return [((n, c, length), dtype), ((n, c, k - 1), dtype)]


@pytest.mark.parametrize(
    ("ins", "outs", "ints", "message"),
    [
        ([np.ones((1, 2, 4), np.int32), np.ones((2, 1, 3), np.int32)], _outs(dtype=np.int32), (), r"input int32\(1, 2, 4\) is not a float"),
        ([np.ones((2, 4), F), np.ones((2, 1, 3), F)], _outs(), (), r"input float32\(2, 4\)"),
        ([np.ones((1, 2, 4), F), np.ones((2, 2, 3), F)], _outs(), (), r"weight \(2, 2, 3\) is not \[2, 1, K >= 1\]"),
        ([np.ones((1, 2, 4), F), np.ones((2, 1, 0), F)], _outs(k=1), (), r"weight \(2, 1, 0\)"),
        ([np.ones((1, 2, 4), F), np.ones((2, 1, 3), np.float64)], _outs(), (), r"weight float64\(2, 1, 3\) is not float32\(2, 1, 3\)"),
        ([np.ones((1, 2, 4), F), np.ones((2, 1, 3), F), np.ones(3, F)], _outs(), (), r"bias float32\(3,\) is not float32\(2,\)"),
        ([np.ones((1, 2, 4), F), np.ones((2, 1, 3), F), np.ones(2, F), np.ones((1, 2, 3), F)], _outs(), (), r"past_state float32\(1, 2, 3\) is not float32\(1, 2, 2\)"),
        ([np.ones((1, 2, 4), F), np.ones((2, 1, 3), F)], [((1, 2, 5), F), ((1, 2, 2), F)], (), r"output float32\(1, 2, 5\)"),
        ([np.ones((1, 2, 4), F), np.ones((2, 1, 3), F)], [((1, 2, 4), F), ((1, 2, 3), F)], (), r"present_state float32\(1, 2, 3\)"),
        ([np.ones((1, 2, 4), F), np.ones((2, 1, 3), F)], _outs(dtype=np.float16), (), r"output float16"),
        ([np.ones((1, 2, 4), F), np.ones((2, 1, 3), F)], _outs(), (2,), "activation 2 is not a CausalConvActivation"),
    ],
    ids=["int input", "rank 2", "weight not depthwise", "empty kernel", "weight dtype", "bias shape",
         "past_state shape", "output shape", "present_state shape", "output dtype", "activation 2"],
)  # fmt: skip
def test_operands_that_do_not_fit_are_a_fault(rig, ins, outs, ints, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(FenceFailedError, match=message):
        rig.run_outputs(K, ins, outs, ints)
