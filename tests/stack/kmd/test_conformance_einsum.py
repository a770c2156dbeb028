# ruff: noqa: E501 - the case tables read best one case per line
"""Conformance of EINSUM through the KMD, on every available backend, against a loop over every
assignment of the labels (the product of the inputs' entries summed into the output's, in
float64 or int64 on the values the kernel reads): matrix products, batched products, transposes,
diagonals and traces, sums over an axis, outer products, three operands, broadcast batch axes
(labels 52+) and size-1 stretching, on float16, float32, float64, int32 and int64; integer
results wrap as the narrow type would; empty axes sum to 0; NaN and infinity propagate; and the
kernel's refusal of subscripts or operands that do not fit."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

from stack.kmd import KernelId
from stack.kmd.errors import FenceFailedError

RNG = np.random.default_rng(60)
K = KernelId.EINSUM
#: Relative tolerance per dtype: float64's own error, one rounding of float32 and float16.
RTOL = {np.float64: 1e-12, np.float32: 2e-7, np.float16: 1e-3}


def loop(xs: list[np.ndarray], subs: tuple[int, ...], out_shape: tuple[int, ...]) -> np.ndarray:
    """The Einstein sum, one label assignment at a time (size-1 axes read at 0)."""
    wide = np.int64 if xs[0].dtype.kind == "i" else np.float64
    terms, at = [], 0
    for x in xs:
        terms.append(subs[at : at + x.ndim])
        at += x.ndim
    out_labels = subs[at:]
    sizes: dict[int, int] = {}
    for x, t in zip(xs, terms, strict=True):
        for lb, n in zip(t, x.shape, strict=True):
            sizes[lb] = max(sizes.get(lb, n), n) if n != 1 else sizes.get(lb, 1)
    labels = sorted(sizes)
    y = np.zeros(out_shape, wide)
    for values in itertools.product(*(range(sizes[lb]) for lb in labels)):
        at_label = dict(zip(labels, values, strict=True))
        term = wide(1)
        for x, t in zip(xs, terms, strict=True):
            idx = tuple(at_label[lb] if n != 1 else 0 for lb, n in zip(t, x.shape, strict=True))
            term = term * x.astype(wide)[idx]
        y[tuple(at_label[lb] for lb in out_labels)] += term
    return y


def rand(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    if np.dtype(dtype).kind == "i":
        return RNG.integers(-9, 10, shape).astype(dtype)
    return RNG.standard_normal(shape).astype(dtype)


#: (input shapes, subscripts, output shape); a=0, b=1, ... and 52+ the broadcast batch.
CASES = [
    ([(2, 3), (3, 4)], (0, 1, 1, 2, 0, 2), (2, 4)),  # ij,jk->ik
    ([(5, 2, 3), (5, 3, 4)], (1, 8, 9, 1, 9, 10, 1, 8, 10), (5, 2, 4)),  # bij,bjk->bik
    ([(2, 3)], (8, 9, 9, 8), (3, 2)),  # ij->ji
    ([(4, 4)], (8, 8, 8), (4,)),  # ii->i
    ([(4, 4)], (8, 8), ()),  # ii->
    ([(3, 5)], (8, 9, 8), (3,)),  # ij->i
    ([(3,), (4,)], (8, 9, 8, 9), (3, 4)),  # i,j->ij
    ([(3,), (3,)], (8, 8), ()),  # i,i->
    ([(2, 3), (3, 4), (4, 5)], (0, 1, 1, 2, 2, 3, 0, 3), (2, 5)),  # ij,jk,kl->il
    ([(2, 1, 3, 4), (5, 4, 2)], (52, 53, 8, 9, 53, 9, 10, 52, 53, 8, 10), (2, 5, 3, 2)),
    ([(2, 3, 3)], (52, 8, 8, 52, 8), (2, 3)),  # ...ii->...i
    ([(2, 3, 4)], (52, 8, 9, 9, 8, 52), (4, 3, 2)),  # ...ij->ji...
]


@pytest.mark.parametrize(
    "dtype", [np.float32, np.float64, np.float16, np.int32, np.int64], ids=lambda d: d.__name__
)
@pytest.mark.parametrize(("shapes", "subs", "out"), CASES, ids=lambda c: str(c))
def test_einsum_matches_the_loop(backend_rig, shapes, subs, out, dtype: Any) -> None:  # type: ignore[no-untyped-def]
    xs = [rand(s, dtype) for s in shapes]
    got = backend_rig.run(K, xs, out, dtype, ints=subs)
    want = loop(xs, subs, out)
    assert got.dtype == np.dtype(dtype) and got.shape == out
    if np.dtype(dtype).kind == "i":
        np.testing.assert_array_equal(got, want.astype(dtype))
    else:
        tol = RTOL[dtype]
        scale = max(float(np.abs(want).max(initial=0)), 1.0)
        np.testing.assert_allclose(got.astype(np.float64), want, rtol=tol, atol=tol * scale)


def test_labels_are_any_ints_named_in_order(backend_rig) -> None:  # type: ignore[no-untyped-def]
    """Labels 30 and 7 name the same contraction as 0 and 1: only their sameness counts."""
    a, b = rand((2, 3), np.float64), rand((3, 2), np.float64)
    got = backend_rig.run(K, [a, b], (2, 2), np.float64, ints=(30, 7, 7, 99, 30, 99))
    np.testing.assert_allclose(got, a @ b, rtol=1e-12)


def test_integer_results_wrap_as_the_narrow_type(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x = np.full((4,), 2**20, np.int32)
    got = backend_rig.run(K, [x, x], (), np.int32, ints=(0, 0))
    assert got == np.int64(4 * 2**40).astype(np.int32)


def test_an_empty_axis_sums_to_zero_and_an_empty_output_is_empty(backend_rig) -> None:  # type: ignore[no-untyped-def]
    a, b = np.zeros((2, 0), np.float32), np.zeros((0, 3), np.float32)
    np.testing.assert_array_equal(backend_rig.run(K, [a, b], (2, 3), ints=(0, 1, 1, 2, 0, 2)), 0)
    none = backend_rig.run(K, [np.zeros((0, 3), np.float32)], (3, 0), ints=(0, 1, 1, 0))
    assert none.shape == (3, 0)


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")
def test_nan_and_infinity_propagate(backend_rig) -> None:  # type: ignore[no-untyped-def]
    a = np.array([[np.nan, 1.0], [1.0, 1.0], [np.inf, 0.0]], np.float32)
    b = np.array([[1.0], [2.0]], np.float32)
    got = backend_rig.run(K, [a, b], (3, 1), ints=(0, 1, 1, 2, 0, 2))
    assert np.isnan(got[0, 0]) and got[1, 0] == 3 and got[2, 0] == np.inf


@pytest.mark.parametrize(
    ("xs", "subs", "shape", "dtype", "message"),
    [
        ([np.ones((2, 3), np.float32)], (0, 1), (2,), np.float32, "subscripts"),
        ([np.ones((2, 3), np.float32)], (0, -1, 0), (2,), np.float32, "subscripts"),
        ([np.ones((2, 3), np.float32), np.ones((4, 2), np.float32)], (0, 1, 1, 2, 0, 2), (2, 2), np.float32, "sizes"),
        ([np.ones((2, 3), np.float32)], (0, 0, 0), (2,), np.float32, "sizes"),
        ([np.ones((2, 3), np.float32)], (0, 1, 0, 0), (2, 2), np.float32, "output labels"),
        ([np.ones((2, 3), np.float32)], (0, 1, 2), (2,), np.float32, "output labels"),
        ([np.ones((2, 3), np.float32)], (0, 1, 0), (3,), np.float32, "Einsum Y"),
        ([np.ones((2, 3), np.float32)], (0, 1, 0), (2,), np.float64, "one dtype"),
        ([np.ones((2,), np.int8)], (0, 0), (2,), np.int8, "one dtype"),
    ],
    ids=["too few labels", "negative label", "label sizes", "diagonal sizes", "repeated output",
         "output not on inputs", "output shape", "output dtype", "int8"],
)  # fmt: skip
def test_operands_that_do_not_fit_are_a_fault(rig, xs, subs, shape, dtype, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(FenceFailedError, match=message):
        rig.run(K, xs, shape, dtype, ints=subs)
