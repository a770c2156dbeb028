"""Conformance of SOFTMAX_CROSS_ENTROPY_LOSS through the KMD, on every available backend,
against a direct loop over the places (ONNX's definition in float64: the log-softmax of each
place's scores over the classes, rounded to the dtype as the kernel's log_prob output is, then
the loss of those very values): every reduction, with and without weights and ignore_index
(inside the classes, negative, past them), k = 0 to 3 trailing axes, int32 and int64 labels,
the three float dtypes; scores far past exp's range (the log-softmax is stable), every place
ignored (sum 0, mean NaN), an empty batch, no class at all, NaN and infinity; and the kernel's
refusal of a label out of range and of operands that do not fit."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from stack.kmd import KernelId
from stack.kmd.errors import FenceFailedError
from stack.kmd.kernels.negative_log_likelihood_loss import LossReduction

K = KernelId.SOFTMAX_CROSS_ENTROPY_LOSS
RNG = np.random.default_rng(58)
#: Relative tolerance per dtype: float64's own error, one rounding of float32 and float16.
RTOL = {np.float64: 1e-12, np.float32: 2e-7, np.float16: 1e-3}


def reference_log_prob(x: np.ndarray) -> np.ndarray:
    """log_prob[n, c, d...] = x - max - log(sum(exp(x - max))) over the classes, place by place."""
    out = np.zeros(x.shape)
    for place in np.ndindex(x.shape[0], *x.shape[2:]):
        row = [float(x[(place[0], c, *place[1:])]) for c in range(x.shape[1])]
        top = max(row)
        lse = top + math.log(sum(math.exp(v - top) for v in row))
        for c, v in enumerate(row):
            out[(place[0], c, *place[1:])] = v - lse
    return out


def reference_loss(
    lp: np.ndarray, t: np.ndarray, w: np.ndarray | None, reduction: LossReduction, ii: int | None
) -> np.ndarray:
    """The loss place by place: -lp[n, c, d...] * w[c] unless c is ignore_index, then reduced."""
    loss, weights = np.zeros(t.shape), np.zeros(t.shape)
    for place in np.ndindex(*t.shape):
        c = int(t[place])
        if ii is not None and c == ii:
            continue
        weights[place] = 1.0 if w is None else float(w[c])
        loss[place] = -float(lp[(place[0], c, *place[1:])]) * weights[place]
    if reduction is LossReduction.NONE:
        return loss
    if reduction is LossReduction.SUM:
        return np.asarray(loss.sum())
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.asarray(loss.sum() / weights.sum())


def run(rig, x, t, w, reduction, ii):  # type: ignore[no-untyped-def]
    ins = [x, t] if w is None else [x, t, w]
    ints = (int(reduction), 0, 0) if ii is None else (int(reduction), 1, ii)
    shape = t.shape if reduction is LossReduction.NONE else ()
    return rig.run_outputs(K, ins, [(shape, x.dtype), (x.shape, x.dtype)], ints=ints)


def labels(shape: tuple[int, ...], c: int, ii: int | None, dtype: Any = np.int64) -> np.ndarray:
    """Classes in [0, c), a third of them ignore_index when there is one."""
    t = RNG.integers(0, c, shape)
    if ii is not None:
        t = np.where(RNG.random(shape) < 1 / 3, ii, t)
    return t.astype(dtype)


def check(got: list[np.ndarray], x, t, w, reduction, ii, rtol: float) -> None:  # type: ignore[no-untyped-def]
    output, log_prob = got
    lp = reference_log_prob(x)
    assert log_prob.dtype == x.dtype and log_prob.shape == x.shape
    np.testing.assert_allclose(log_prob.astype(np.float64), lp, rtol=rtol, atol=rtol)
    want = reference_loss(lp.astype(x.dtype), t, w, reduction, ii)
    assert output.dtype == x.dtype and output.shape == want.shape
    np.testing.assert_allclose(output.astype(np.float64), want, rtol=rtol, atol=rtol)


SHAPES = [(3, 5), (3, 5, 2), (2, 4, 3, 3), (2, 3, 2, 1, 4), (1, 1), (4, 2, 0)]


@pytest.mark.parametrize("reduction", list(LossReduction), ids=lambda r: r.name.lower())
@pytest.mark.parametrize("weighted", [False, True], ids=["no_weights", "weights"])
@pytest.mark.parametrize("ii", [None, 1, -1, 10], ids=lambda i: f"ii{i}")
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_matches_the_loop(backend_rig, shape, ii, weighted, reduction) -> None:  # type: ignore[no-untyped-def]
    x = (RNG.standard_normal(shape) * 3).astype(np.float32)
    t = labels((shape[0], *shape[2:]), shape[1], ii)
    w = RNG.random(shape[1]).astype(np.float32) + 0.5 if weighted else None
    check(run(backend_rig, x, t, w, reduction, ii), x, t, w, reduction, ii, 2e-7)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16], ids=lambda d: d.__name__)
@pytest.mark.parametrize("tdtype", [np.int32, np.int64], ids=lambda d: d.__name__)
@pytest.mark.parametrize("reduction", list(LossReduction), ids=lambda r: r.name.lower())
def test_every_float_dtype_and_label_dtype(backend_rig, dtype, tdtype, reduction) -> None:  # type: ignore[no-untyped-def]
    x = RNG.standard_normal((4, 6, 5)).astype(dtype)
    t = labels((4, 5), 6, 2, tdtype)
    w = (RNG.random(6) + 0.5).astype(dtype)
    check(run(backend_rig, x, t, w, reduction, 2), x, t, w, reduction, 2, RTOL[dtype])


def test_the_loss_is_that_of_the_log_prob_written(backend_rig) -> None:  # type: ignore[no-untyped-def]
    """Reduction none is -log_prob[n, label] * weights[label] bit for bit (NLL's exact product)."""
    x = RNG.standard_normal((5, 7, 3)).astype(np.float32)
    t = labels((5, 3), 7, None)
    w = RNG.random(7).astype(np.float32)
    output, log_prob = run(backend_rig, x, t, w, LossReduction.NONE, None)
    want = -np.take_along_axis(log_prob, t[:, None, :], axis=1)[:, 0] * w[t]
    np.testing.assert_array_equal(output, want)


@pytest.mark.parametrize("dtype", [np.float32, np.float16], ids=lambda d: d.__name__)
def test_scores_past_exps_range_are_stable(backend_rig, dtype) -> None:  # type: ignore[no-untyped-def]
    big = 3e4 if dtype is np.float16 else 1e30
    x = np.array([[big, big - 1 if dtype is np.float32 else big, -big], [-big, -big, -big]], dtype)
    output, log_prob = run(backend_rig, x, np.array([0, 2]), None, LossReduction.NONE, None)
    assert np.isfinite(log_prob).all() and np.isfinite(output).all()
    np.testing.assert_allclose(log_prob[1], [-math.log(3)] * 3, rtol=1e-3)


def test_every_place_ignored_sums_to_zero_and_averages_to_nan(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    t = np.array([1, 1])
    assert run(backend_rig, x, t, None, LossReduction.SUM, 1)[0] == 0
    assert np.isnan(run(backend_rig, x, t, None, LossReduction.MEAN, 1)[0])
    np.testing.assert_array_equal(run(backend_rig, x, t, None, LossReduction.NONE, 1)[0], [0, 0])


def test_an_empty_batch(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x, t = np.zeros((0, 4, 2), np.float32), np.zeros((0, 2), np.int64)
    output, log_prob = run(backend_rig, x, t, None, LossReduction.NONE, None)
    assert output.shape == (0, 2) and log_prob.shape == (0, 4, 2)
    assert run(backend_rig, x, t, None, LossReduction.SUM, None)[0] == 0
    assert np.isnan(run(backend_rig, x, t, None, LossReduction.MEAN, None)[0])


def test_no_class_at_all_with_every_place_ignored(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x, t = np.zeros((2, 0), np.float32), np.array([-100, -100])
    output, log_prob = run(backend_rig, x, t, None, LossReduction.NONE, -100)
    np.testing.assert_array_equal(output, [0, 0])
    assert log_prob.shape == (2, 0)


def test_nan_and_infinity_propagate_but_an_ignored_place_is_zero(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x = np.array([[np.nan, 1.0], [2.0, np.inf], [-np.inf, 3.0], [-np.inf, -np.inf]], np.float32)
    t = np.array([0, 0, 0, 1])
    output, log_prob = run(backend_rig, x, t, None, LossReduction.NONE, None)
    assert np.isnan(log_prob[0]).all() and np.isnan(output[0])
    assert np.isnan(log_prob[1]).all() and np.isnan(output[1])  # inf - inf
    assert log_prob[2, 0] == -np.inf and log_prob[2, 1] == 0 and output[2] == np.inf
    assert np.isnan(log_prob[3]).all() and np.isnan(output[3])  # -inf - -inf
    ignored, _ = run(backend_rig, x, t, None, LossReduction.NONE, 0)
    np.testing.assert_array_equal(ignored[:3], [0, 0, 0])


@pytest.mark.parametrize(
    ("t", "ii"), [([0, 5, 1], None), ([0, -1, 1], None), ([0, 7, 1], 5)], ids=["past", "neg", "ii"]
)
def test_a_label_out_of_range_is_a_fault(rig, t, ii) -> None:  # type: ignore[no-untyped-def]
    x = np.zeros((3, 5), np.float32)
    with pytest.raises(FenceFailedError, match="target out of range for 5 classes"):
        run(rig, x, np.array(t), None, LossReduction.SUM, ii)


_X, _T = np.ones((2, 3), np.float32), np.zeros(2, np.int64)


@pytest.mark.parametrize(
    ("ins", "outs", "ints", "message"),
    [
        ([np.ones(3, np.float32), _T], [((), np.float32), ((3,), np.float32)], (1,), "scores"),
        ([np.ones((2, 3), np.int32), _T], [((), np.int32), ((2, 3), np.int32)], (1,), "scores"),
        ([_X, np.zeros(3, np.int64)], [((), np.float32), ((2, 3), np.float32)], (1,), "target"),
        ([_X, np.zeros(2, np.float32)], [((), np.float32), ((2, 3), np.float32)], (1,), "target"),
        ([_X, _T, np.ones(2, np.float32)], [((), np.float32), ((2, 3), np.float32)], (1,),
         "weight"),
        ([_X, _T], [((2,), np.float32), ((2, 3), np.float32)], (1,), "loss"),
        ([_X, _T], [((), np.float32), ((2, 3), np.float32)], (0,), "loss"),
        ([_X, _T], [((), np.float64), ((2, 3), np.float32)], (2,), "loss"),
        ([_X, _T], [((), np.float32), ((3, 2), np.float32)], (2,), "log_prob"),
        ([_X, _T], [((), np.float32), ((2, 3), np.float64)], (2,), "log_prob"),
        ([_X, _T], [((), np.float32), ((2, 3), np.float32)], (3,), "3"),
    ],
    ids=["rank 1", "int scores", "labels shape", "float labels", "weights shape", "sum of shape",
         "none scalar", "output dtype", "log_prob shape", "log_prob dtype", "reduction 3"],
)  # fmt: skip
def test_operands_that_do_not_fit_are_a_fault(rig, ins, outs, ints, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(FenceFailedError, match=message):
        rig.run_outputs(K, ins, outs, ints=ints)
