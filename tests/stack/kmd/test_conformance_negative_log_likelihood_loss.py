"""Conformance of NEGATIVE_LOG_LIKELIHOOD_LOSS through the KMD, on every available backend,
against a direct loop over the places (ONNX's definition, in float64 on the very values the
kernel reads): every reduction, with and without weight and ignore_index (inside the classes,
negative, past them), k = 0 to 3 trailing axes, int32 and int64 targets, the three float dtypes
(the kernel rounds once, so the loop's float64 answer rounded to the dtype is within a rounding
of it); every place ignored (sum 0, mean NaN), an empty batch, NaN and infinity; and the
kernel's refusal of a target out of range and of operands that do not fit."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from stack.kmd import KernelId
from stack.kmd.errors import FenceFailedError
from stack.kmd.kernels.negative_log_likelihood_loss import LossReduction

K = KernelId.NEGATIVE_LOG_LIKELIHOOD_LOSS
RNG = np.random.default_rng(57)
#: Relative tolerance per dtype: float64's own error, one rounding of float32 and float16.
RTOL = {np.float64: 1e-12, np.float32: 2e-7, np.float16: 1e-3}


def reference(
    x: np.ndarray, t: np.ndarray, w: np.ndarray | None, reduction: LossReduction, ii: int | None
) -> np.ndarray:
    """The loss place by place: -x[n, c, d...] * w[c] unless c is ignore_index, then reduced."""
    loss = np.zeros(t.shape)
    weights = np.zeros(t.shape)
    for place in np.ndindex(*t.shape):
        c = int(t[place])
        if ii is not None and c == ii:
            continue
        weights[place] = 1.0 if w is None else float(w[c])
        loss[place] = -float(x[(place[0], c, *place[1:])]) * weights[place]
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
    return rig.run(K, ins, shape, x.dtype, ints=ints)


def targets(shape: tuple[int, ...], c: int, ii: int | None, dtype: Any = np.int64) -> np.ndarray:
    """Classes in [0, c), a third of them ignore_index when there is one."""
    t = RNG.integers(0, c, shape)
    if ii is not None:
        t = np.where(RNG.random(shape) < 1 / 3, ii, t)
    return t.astype(dtype)


SHAPES = [(3, 5), (3, 5, 2), (2, 4, 3, 3), (2, 3, 2, 1, 4), (1, 1), (4, 2, 0)]


@pytest.mark.parametrize("reduction", list(LossReduction), ids=lambda r: r.name.lower())
@pytest.mark.parametrize("weighted", [False, True], ids=["no_weight", "weight"])
@pytest.mark.parametrize("ii", [None, 1, -1, 10], ids=lambda i: f"ii{i}")
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_matches_the_loop(backend_rig, shape, ii, weighted, reduction) -> None:  # type: ignore[no-untyped-def]
    x = RNG.standard_normal(shape).astype(np.float32)
    t = targets((shape[0], *shape[2:]), shape[1], ii)
    w = RNG.random(shape[1]).astype(np.float32) + 0.5 if weighted else None
    got = run(backend_rig, x, t, w, reduction, ii)
    want = reference(x, t, w, reduction, ii)
    assert got.dtype == np.float32 and got.shape == want.shape
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=2e-7, atol=1e-7)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16], ids=lambda d: d.__name__)
@pytest.mark.parametrize("tdtype", [np.int32, np.int64], ids=lambda d: d.__name__)
@pytest.mark.parametrize("reduction", list(LossReduction), ids=lambda r: r.name.lower())
def test_every_float_dtype_and_target_dtype(backend_rig, dtype, tdtype, reduction) -> None:  # type: ignore[no-untyped-def]
    x = RNG.standard_normal((4, 6, 5)).astype(dtype)
    t = targets((4, 5), 6, 2, tdtype)
    w = (RNG.random(6) + 0.5).astype(dtype)
    got = run(backend_rig, x, t, w, reduction, 2)
    want = reference(x, t, w, reduction, 2)
    assert got.dtype == dtype
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=RTOL[dtype], atol=RTOL[dtype])


def test_the_loss_per_place_is_exact(backend_rig) -> None:  # type: ignore[no-untyped-def]
    """A float32 product is exact in float64: reduction none is ONNX's loss bit for bit."""
    x = RNG.standard_normal((5, 7, 3)).astype(np.float32)
    t = targets((5, 3), 7, None)
    w = RNG.random(7).astype(np.float32)
    got = run(backend_rig, x, t, w, LossReduction.NONE, None)
    want = -np.take_along_axis(x, t[:, None, :], axis=1)[:, 0] * w[t]
    np.testing.assert_array_equal(got, want)


def test_every_place_ignored_sums_to_zero_and_averages_to_nan(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    t = np.array([1, 1])
    assert run(backend_rig, x, t, None, LossReduction.SUM, 1) == 0
    assert np.isnan(run(backend_rig, x, t, None, LossReduction.MEAN, 1))
    np.testing.assert_array_equal(run(backend_rig, x, t, None, LossReduction.NONE, 1), [0, 0])


def test_an_empty_batch(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x, t = np.zeros((0, 4, 2), np.float32), np.zeros((0, 2), np.int64)
    assert run(backend_rig, x, t, None, LossReduction.NONE, None).shape == (0, 2)
    assert run(backend_rig, x, t, None, LossReduction.SUM, None) == 0
    assert np.isnan(run(backend_rig, x, t, None, LossReduction.MEAN, None))


def test_no_class_at_all_with_every_place_ignored(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x, t = np.zeros((2, 0), np.float32), np.array([-100, -100])
    np.testing.assert_array_equal(run(backend_rig, x, t, None, LossReduction.NONE, -100), [0, 0])


def test_nan_and_infinity_propagate_but_an_ignored_place_is_zero(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x = np.array([[np.nan, 1.0], [2.0, np.inf], [np.inf, 3.0]], np.float32)
    t = np.array([0, 1, 0])
    got = run(backend_rig, x, t, None, LossReduction.NONE, None)
    assert np.isnan(got[0]) and got[1] == -np.inf and got[2] == -np.inf
    ignored = run(backend_rig, x, t, None, LossReduction.NONE, 0)
    np.testing.assert_array_equal(ignored, [0, -np.inf, 0])
    assert run(backend_rig, x, t, None, LossReduction.SUM, 0) == -np.inf


@pytest.mark.parametrize(
    ("t", "ii"), [([0, 5, 1], None), ([0, -1, 1], None), ([0, 7, 1], 5)], ids=["past", "neg", "ii"]
)
def test_a_target_out_of_range_is_a_fault(rig, t, ii) -> None:  # type: ignore[no-untyped-def]
    x = np.zeros((3, 5), np.float32)
    with pytest.raises(FenceFailedError, match="target out of range for 5 classes"):
        run(rig, x, np.array(t), None, LossReduction.SUM, ii)


@pytest.mark.parametrize(
    ("ins", "shape", "dtype", "ints", "message"),
    [
        ([np.ones(3, np.float32), np.zeros(3, np.int64)], (), np.float32, (1,), "input"),
        ([np.ones((2, 3), np.int32), np.zeros(2, np.int64)], (), np.int32, (1,), "input"),
        ([np.ones((2, 3), np.float32), np.zeros(3, np.int64)], (), np.float32, (1,), "target"),
        ([np.ones((2, 3), np.float32), np.zeros(2, np.float32)], (), np.float32, (1,), "target"),
        ([np.ones((2, 3), np.float32), np.zeros(2, np.int64), np.ones(2, np.float32)], (),
         np.float32, (1,), "weight"),
        ([np.ones((2, 3), np.float32), np.zeros(2, np.int64), np.ones(3, np.float64)], (),
         np.float32, (1,), "weight"),
        ([np.ones((2, 3), np.float32), np.zeros(2, np.int64)], (2,), np.float32, (1,), "loss"),
        ([np.ones((2, 3), np.float32), np.zeros(2, np.int64)], (), np.float32, (0,), "loss"),
        ([np.ones((2, 3), np.float32), np.zeros(2, np.int64)], (), np.float64, (2,), "loss"),
        ([np.ones((2, 3), np.float32), np.zeros(2, np.int64)], (), np.float32, (3,), "3"),
    ],
    ids=["rank 1", "int input", "target shape", "float target", "weight shape", "weight dtype",
         "sum of shape", "none scalar", "loss dtype", "reduction 3"],
)  # fmt: skip
def test_operands_that_do_not_fit_are_a_fault(rig, ins, shape, dtype, ints, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(FenceFailedError, match=message):
        rig.run(K, ins, shape, dtype, ints=ints)
