"""Conformance of the function-family kernels (UNARY, BINARY, WHERE, CAST, REDUCE, ARG_REDUCE,
CUMSUM, TOPK, GATHER, GATHER_ELEMENTS, SLICE, PAD, EXPAND, TILE) through the KMD, on every
available backend, against direct NumPy references."""

from __future__ import annotations

import math

import numpy as np
import pytest

from stack.kmd import KernelId
from stack.kmd.kernels.binary import BinaryFn
from stack.kmd.kernels.index import PadMode
from stack.kmd.kernels.reduce import ReduceFn
from stack.kmd.kernels.unary import UnaryFn

RNG = np.random.default_rng(7)


def _x(shape=(3, 4), dtype=np.float32, lo=-3.0, hi=3.0):  # type: ignore[no-untyped-def]
    return RNG.uniform(lo, hi, shape).astype(dtype)


_erf = np.vectorize(math.erf)
UNARY_REFS = {
    UnaryFn.NEG: (lambda x: -x, (-3, 3)),
    UnaryFn.ABS: (np.abs, (-3, 3)),
    UnaryFn.SQRT: (np.sqrt, (0.1, 4)),
    UnaryFn.RECIPROCAL: (lambda x: 1 / x, (0.5, 4)),
    UnaryFn.EXP: (np.exp, (-3, 3)),
    UnaryFn.LOG: (np.log, (0.1, 4)),
    UnaryFn.ERF: (_erf, (-3, 3)),
    UnaryFn.TANH: (np.tanh, (-3, 3)),
    UnaryFn.SIGMOID: (lambda x: 1 / (1 + np.exp(-x)), (-8, 8)),
    UnaryFn.GELU: (lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2))), (-3, 3)),
    UnaryFn.HARD_SWISH: (lambda x: x * np.clip(x / 6 + 0.5, 0, 1), (-5, 5)),
    UnaryFn.CEIL: (np.ceil, (-3, 3)),
    UnaryFn.FLOOR: (np.floor, (-3, 3)),
    UnaryFn.SIN: (np.sin, (-3, 3)),
    UnaryFn.ATAN: (np.arctan, (-3, 3)),
    UnaryFn.SIGN: (np.sign, (-3, 3)),
    UnaryFn.SOFTPLUS: (lambda x: np.log1p(np.exp(x)), (-3, 3)),
    UnaryFn.SOFTSIGN: (lambda x: x / (1 + np.abs(x)), (-3, 3)),
    UnaryFn.MISH: (lambda x: x * np.tanh(np.log1p(np.exp(x))), (-3, 3)),
}


@pytest.mark.parametrize("fn", list(UNARY_REFS), ids=lambda f: f.name)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary(backend_rig, fn: UnaryFn, dtype) -> None:  # type: ignore[no-untyped-def]
    ref, (lo, hi) = UNARY_REFS[fn]
    x = _x((3, 5), dtype, lo, hi)
    out = backend_rig.run(KernelId.UNARY, [x], x.shape, dtype, ints=(int(fn),))
    np.testing.assert_allclose(out, ref(x.astype(np.float64)), rtol=2e-6, atol=1e-6)


def test_unary_parameters_and_predicates(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x = np.array([-2.0, -0.5, 0.0, 0.5, 2.0, np.nan, np.inf, -np.inf], np.float32)
    run = backend_rig.run
    leaky = run(KernelId.UNARY, [x], x.shape, ints=(int(UnaryFn.LEAKY_RELU),), floats=(0.1,))
    np.testing.assert_array_equal(leaky, np.where(x < 0, 0.1 * x, x).astype(np.float32))
    clip = run(KernelId.UNARY, [x], x.shape, ints=(int(UnaryFn.CLIP), 1, 1), floats=(-1.0, 1.0))
    np.testing.assert_array_equal(clip, [-1, -0.5, 0, 0.5, 1, np.nan, 1, -1])
    hsig = run(KernelId.UNARY, [x], x.shape, ints=(int(UnaryFn.HARD_SIGMOID),), floats=(0.2, 0.5))
    np.testing.assert_allclose(hsig, np.clip(0.2 * x + 0.5, 0, 1), rtol=1e-6)
    isnan = run(KernelId.UNARY, [x], x.shape, np.bool_, ints=(int(UnaryFn.ISNAN),))
    np.testing.assert_array_equal(isnan, np.isnan(x))
    isinf = run(KernelId.UNARY, [x], x.shape, np.bool_, ints=(int(UnaryFn.ISINF), 1, 0))
    np.testing.assert_array_equal(isinf, np.isposinf(x))
    b = np.array([True, False])
    assert run(KernelId.UNARY, [b], b.shape, np.bool_, ints=(int(UnaryFn.NOT),)).tolist() == [
        False,
        True,
    ]


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
def test_binary_mod_and_integer_functions(backend_rig, dtype) -> None:  # type: ignore[no-untyped-def]
    a = np.array([-7, 7, -7, 7, 5, -5], dtype)
    b = np.array([2, 2, -2, -2, 3, 3], dtype)
    run = backend_rig.run
    mod = run(KernelId.BINARY, [a, b], a.shape, dtype, ints=(int(BinaryFn.MOD), 0))
    np.testing.assert_array_equal(mod, [1, 1, -1, -1, 2, 1])  # sign of the divisor
    fmod = run(KernelId.BINARY, [a, b], a.shape, dtype, ints=(int(BinaryFn.MOD), 1))
    np.testing.assert_array_equal(fmod, [-1, 1, -1, 1, 2, -2])  # sign of the dividend
    big = np.array([2**62 + 1], np.int64)
    if dtype == np.int64:
        same = run(KernelId.BINARY, [big, big], (1,), np.int64, ints=(int(BinaryFn.MAX), 0))
        assert int(same[0]) == 2**62 + 1
    less = run(KernelId.BINARY, [a, b], a.shape, np.bool_, ints=(int(BinaryFn.LESS), 0))
    np.testing.assert_array_equal(less, a < b)


def test_binary_broadcast_pow_minmax_and_nan(backend_rig) -> None:  # type: ignore[no-untyped-def]
    a = np.array([[1.0, np.nan, -2.0], [4.0, 0.5, np.nan]], np.float32)
    b = np.array([2.0, 1.0, np.nan], np.float32)
    run = backend_rig.run
    pw = run(KernelId.BINARY, [a, b], a.shape, ints=(int(BinaryFn.POW),))
    np.testing.assert_allclose(pw, np.power(a, b), rtol=1e-6)
    mx = run(KernelId.BINARY, [a, b], a.shape, ints=(int(BinaryFn.MAX),))
    mn = run(KernelId.BINARY, [a, b], a.shape, ints=(int(BinaryFn.MIN),))
    np.testing.assert_array_equal(mx, np.maximum(a, b))  # NaN wins either way round
    np.testing.assert_array_equal(mn, np.minimum(a, b))
    assert np.isnan(mx[:, 1:]).sum() == 3 and np.isnan(mn[:, 2]).all()
    e = np.array([2, 3], np.int64)
    pw_int = run(KernelId.BINARY, [a[:, :2].copy(), e], (2, 2), ints=(int(BinaryFn.POW),))
    np.testing.assert_allclose(pw_int, a[:, :2] ** e, rtol=1e-6)


def test_where_and_cast(backend_rig) -> None:  # type: ignore[no-untyped-def]
    cond = np.array([[True], [False]])
    x, y = _x((2, 3)), _x((3,))
    out = backend_rig.run(KernelId.WHERE, [cond, x, y], (2, 3))
    np.testing.assert_array_equal(out, np.where(cond, x, y))
    f = np.array([-2.7, -0.5, 0.0, 1.9, 300.0], np.float32)
    as_int = backend_rig.run(KernelId.CAST, [f], f.shape, np.int32)
    np.testing.assert_array_equal(as_int, [-2, 0, 0, 1, 300])
    as_bool = backend_rig.run(KernelId.CAST, [f], f.shape, np.bool_)
    np.testing.assert_array_equal(as_bool, f != 0)


@pytest.mark.parametrize("fn", list(ReduceFn), ids=lambda f: f.name)
def test_reduce(backend_rig, fn: ReduceFn) -> None:  # type: ignore[no-untyped-def]
    x = _x((2, 3, 4), np.float64, 0.5, 2.0)
    refs = {
        ReduceFn.SUM: lambda a: a.sum(axis=(0, 2)),
        ReduceFn.MEAN: lambda a: a.mean(axis=(0, 2)),
        ReduceFn.MAX: lambda a: a.max(axis=(0, 2)),
        ReduceFn.MIN: lambda a: a.min(axis=(0, 2)),
        ReduceFn.PROD: lambda a: a.prod(axis=(0, 2)),
        ReduceFn.L1: lambda a: np.abs(a).sum(axis=(0, 2)),
        ReduceFn.L2: lambda a: np.sqrt((a * a).sum(axis=(0, 2))),
        ReduceFn.LOG_SUM: lambda a: np.log(a.sum(axis=(0, 2))),
        ReduceFn.LOG_SUM_EXP: lambda a: np.log(np.exp(a).sum(axis=(0, 2))),
        ReduceFn.SUM_SQUARE: lambda a: (a * a).sum(axis=(0, 2)),
    }
    out = backend_rig.run(KernelId.REDUCE, [x], (3,), np.float64, ints=(int(fn), 0b101))
    np.testing.assert_allclose(out, refs[fn](x), rtol=1e-12)


def test_reduce_of_an_empty_set_gives_the_identity(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x = np.zeros((2, 0), np.float32)
    run = backend_rig.run
    assert run(KernelId.REDUCE, [x], (2,), ints=(int(ReduceFn.SUM), 0b10)).tolist() == [0, 0]
    assert run(KernelId.REDUCE, [x], (2,), ints=(int(ReduceFn.PROD), 0b10)).tolist() == [1, 1]
    mx = run(KernelId.REDUCE, [x], (2,), ints=(int(ReduceFn.MAX), 0b10))
    assert mx.tolist() == [-np.inf, -np.inf]


@pytest.mark.parametrize("last", [0, 1])
def test_arg_reduce_and_ties(backend_rig, last: int) -> None:  # type: ignore[no-untyped-def]
    x = np.array([[1, 5, 5, 0], [2, 2, 2, 2]], np.int32)
    amax = backend_rig.run(KernelId.ARG_REDUCE, [x], (2,), np.int64, ints=(0, 1, last))
    assert amax.tolist() == ([2, 3] if last else [1, 0])
    amin = backend_rig.run(KernelId.ARG_REDUCE, [x], (2, 1), np.int64, ints=(1, 1, last))
    assert amin.ravel().tolist() == ([3, 3] if last else [3, 0])


@pytest.mark.parametrize(
    ("exclusive", "reverse", "prod"), [(0, 0, 0), (1, 0, 0), (0, 1, 1), (1, 1, 1)]
)
def test_cumsum_and_cumprod(backend_rig, exclusive, reverse, prod) -> None:  # type: ignore[no-untyped-def]
    x = np.array([[1, 2, 3], [4, 5, 6]], np.int64)
    out = backend_rig.run(
        KernelId.CUMSUM, [x], x.shape, np.int64, ints=(1, exclusive, reverse, prod)
    )
    src = x[:, ::-1] if reverse else x
    acc = np.cumprod(src, axis=1) if prod else np.cumsum(src, axis=1)
    if exclusive:
        acc = np.concatenate([np.full((2, 1), 1 if prod else 0), acc[:, :-1]], axis=1)
    np.testing.assert_array_equal(out, acc[:, ::-1] if reverse else acc)


@pytest.mark.parametrize("largest", [1, 0])
def test_topk_keeps_index_order_for_ties(backend_rig, largest: int) -> None:  # type: ignore[no-untyped-def]
    x = np.array([[3, 1, 3, 2, 1]], np.int64)
    params = [
        backend_rig.put(x),
        backend_rig.empty((1, 3), np.int64),
        backend_rig.empty((1, 3), np.int64),
    ]
    value = backend_rig.submit([backend_rig.blob(KernelId.TOPK, params, (1, largest, 1))])
    backend_rig.dev.wait_fence(backend_rig.ctx, backend_rig.fence, value, timeout_s=30)
    vals = backend_rig.dev.read_array(backend_rig.ctx, params[1].addr, (1, 3), params[1].dtype)
    idx = backend_rig.dev.read_array(backend_rig.ctx, params[2].addr, (1, 3), params[2].dtype)
    for p in params:
        backend_rig.dev.free(backend_rig.ctx, p.addr)
    if largest:
        assert (vals.tolist(), idx.tolist()) == ([[3, 3, 2]], [[0, 2, 3]])
    else:
        assert (vals.tolist(), idx.tolist()) == ([[1, 1, 2]], [[1, 4, 3]])


def test_gather_and_gather_elements_wrap_negative_indices(backend_rig) -> None:  # type: ignore[no-untyped-def]
    data = _x((4, 3))
    idx = np.array([[0, -1], [2, 1]], np.int64)
    out = backend_rig.run(KernelId.GATHER, [data, idx], (2, 2, 3), ints=(0,))
    np.testing.assert_array_equal(out, data[[[0, 3], [2, 1]]])
    el = np.array([[0, -1, 1]], np.int32)
    out2 = backend_rig.run(KernelId.GATHER_ELEMENTS, [data, el], (1, 3), ints=(0,))
    np.testing.assert_array_equal(out2, [[data[0, 0], data[3, 1], data[1, 2]]])


def test_slice_pad_expand_tile(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    run = backend_rig.run
    sl = run(KernelId.SLICE, [x], (3, 2), ints=(2, -4, -1, 1, 4, 2))  # -4: past row 0
    np.testing.assert_array_equal(sl, x[2::-1, 1::2])
    for mode, np_mode in (
        (PadMode.REFLECT, "reflect"),
        (PadMode.EDGE, "edge"),
        (PadMode.WRAP, "wrap"),
    ):
        out = run(KernelId.PAD, [x], (4, 7), ints=(int(mode), 1, 2, 0, 1))
        np.testing.assert_array_equal(out, np.pad(x, ((1, 0), (2, 1)), mode=np_mode))
    cropped = run(KernelId.PAD, [x], (3, 4), ints=(0, -1, 0, 1, 0), floats=(9.0,))
    np.testing.assert_array_equal(cropped, np.pad(x[1:], ((0, 1), (0, 0)), constant_values=9))
    ex = run(KernelId.EXPAND, [x[:1]], (2, 3, 4))
    np.testing.assert_array_equal(ex, np.broadcast_to(x[:1], (2, 3, 4)))
    ti = run(KernelId.TILE, [x], (6, 4), ints=(2, 1))
    np.testing.assert_array_equal(ti, np.tile(x, (2, 1)))


def test_gather_nd_with_batch_dims(backend_rig) -> None:  # type: ignore[no-untyped-def]
    data = _x((2, 3, 4))
    idx = np.array([[[0, 1], [2, -1]], [[1, 0], [0, 3]]], np.int64)  # batch 2, 2 picks, k = 2
    out = backend_rig.run(KernelId.GATHER_ND, [data, idx[:, :, :1]], (2, 2, 4), ints=(1,))
    np.testing.assert_array_equal(out, np.stack([data[b][idx[b, :, 0]] for b in range(2)]))
    rows = np.array([[0, 1], [1, -1], [-1, 0], [0, 2]], np.int64)  # negative: from the end
    full = backend_rig.run(KernelId.GATHER_ND, [data, rows], (4, 4), ints=(0,))
    np.testing.assert_array_equal(full, [data[r[0], r[1]] for r in rows])
