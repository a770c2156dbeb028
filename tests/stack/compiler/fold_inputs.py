"""Input generators of the fold differential test (:mod:`test_fold_differential`): random
values of a dtype with its extremes (or, for floats, without them), and the inputs some ops need
in range (divisors, exponents, shift amounts, indices, MaxUnpool places, ReverseSequence
and RNN lengths, TensorScatter write indices, NegativeLogLikelihoodLoss classes, RotaryEmbedding
position ids, Attention's valid key counts). Each is ``(rng, shape, dtype, position) -> array``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

Make = Callable[[np.random.Generator, tuple[int, ...], np.dtype, int], Any]


def values(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype, i: int) -> Any:
    """Random values of ``dtype`` spanning negative and positive, with the dtype's extremes
    (integers) or NaN, infinities and signed zeros (floats) mixed in."""
    if dtype == np.bool_:
        return rng.integers(0, 2, shape).astype(bool)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        arr = rng.integers(max(info.min, -1000), min(info.max, 1000), shape, endpoint=True)
        arr = arr.astype(dtype)
        flat = arr.reshape(-1)
        if flat.size >= 2:
            flat[0], flat[1] = info.min, info.max
        return arr
    arr = (rng.standard_normal(shape) * 4).astype(dtype)
    flat = arr.reshape(-1)
    specials = np.array([np.nan, np.inf, -np.inf, -0.0], dtype)
    flat[: min(flat.size, 4)] = specials[: min(flat.size, 4)]
    return arr


def finite(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype, i: int) -> Any:
    """Random float values as :func:`values` gives them, without its NaN and infinities: for a
    result that reads every input element (the determinant of one matrix), which they would
    decide."""
    return (rng.standard_normal(shape) * 4).astype(dtype)


def nonzero_divisor(
    rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype, i: int
) -> Any:
    """Dividends as :func:`values`; integer divisors non-zero and of both signs (a zero integer
    divisor is undefined in ONNX), float divisors with zeros to pin inf/NaN handling."""
    arr = values(rng, shape, dtype, i)
    if i == 1 and dtype.kind in "iu":
        arr = np.where(arr == 0, np.asarray(3, dtype), arr).astype(dtype)
        if dtype.kind == "i":
            arr.reshape(-1)[0] = -1  # INT_MIN / -1 wraps identically in both
    elif i == 1 and dtype.kind == "f":
        arr.reshape(-1)[-1] = 0.0
    return arr


def small_exponent(
    rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype, i: int
) -> Any:
    """Bases as :func:`values`; exponents 0..3 (integers have no negative powers)."""
    return values(rng, shape, dtype, i) if i == 0 else rng.integers(0, 4, shape).astype(dtype)


def shift_amounts(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype, i: int) -> Any:
    bits = dtype.itemsize * 8
    hi = bits - 1 if i == 1 else np.iinfo(dtype).max
    return rng.integers(0, min(hi, 1000), shape, endpoint=True).astype(dtype)


def unpool_places(size: int) -> Make:
    """Values as :func:`values`; MaxUnpool indices: flat places in [0, size), the first one
    named twice (the last value naming it wins)."""

    def make(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype, i: int) -> Any:
        if i == 1:
            places = rng.integers(0, size, shape).astype(np.int64)
            places.reshape(-1)[-1] = places.reshape(-1)[0]
            return places
        return values(rng, shape, dtype, i)

    return make


def in_range(limit: int) -> Make:
    """Data as :func:`values`; indices in [-limit, limit) (negative ones count from the end)."""

    def make(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype, i: int) -> Any:
        if i == 1:
            return rng.integers(-limit, limit, shape).astype(np.int64)
        return values(rng, shape, dtype, i)

    return make


def lengths_within(steps: int) -> Make:
    """Data as :func:`values`; ReverseSequence lengths in [0, steps], both ends included."""

    def make(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype, i: int) -> Any:
        if i == 1:
            lens = rng.integers(0, steps, shape, endpoint=True).astype(np.int64)
            lens.reshape(-1)[:2] = (steps, 0)[: lens.size]
            return lens
        return values(rng, shape, dtype, i)

    return make


def rnn_lengths(steps: int) -> Make:
    """RNN (GRU, LSTM) operands finite (X's first element NaN, reaching its entry only, when
    ``nan``) and scaled by 1/4 (so the states are neither all saturated nor overflowing),
    sequence_lens (input 4) in [0, steps], both ends included."""

    def make(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype, i: int) -> Any:
        if i == 4:
            lens = rng.integers(0, steps, shape, endpoint=True).astype(dtype)
            lens.reshape(-1)[:2] = (steps, 0)[: lens.size]
            return lens
        arr = (rng.standard_normal(shape) * (2 if i == 0 else 0.25)).astype(dtype)
        if i == 0 and arr.size:
            arr.reshape(-1)[-1] = np.nan
        return arr

    return make


def write_starts(high: int) -> Make:
    """Cache and update as :func:`values`; TensorScatter write indices in [0, high], both ends
    included (past the room left on the axis they wrap in circular mode)."""

    def make(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype, i: int) -> Any:
        if i == 2:
            starts = rng.integers(0, high, shape, endpoint=True).astype(np.int64)
            starts.reshape(-1)[:2] = (high, 0)[: starts.size]
            return starts
        return values(rng, shape, dtype, i)

    return make


def classes(c: int, ignore: int | None = None) -> Make:
    """Input and weight as :func:`values`; NegativeLogLikelihoodLoss targets: classes in
    [0, c), a third of them ``ignore`` when given (it may lie outside the classes)."""

    def make(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype, i: int) -> Any:
        if i == 1:
            t = rng.integers(0, c, shape)
            if ignore is not None:
                t = np.where(rng.random(shape) < 1 / 3, ignore, t)
            return t.astype(dtype)
        return values(rng, shape, dtype, i)

    return make


def positions(rows: int) -> Make:
    """X and the caches as :func:`values`; RotaryEmbedding position_ids (input 3): rows of the
    caches in [0, rows)."""

    def make(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype, i: int) -> Any:
        if i == 3:
            return rng.integers(0, rows, shape).astype(np.int64)
        return values(rng, shape, dtype, i)

    return make


def kv_lengths(keys: int) -> Make:
    """Q, K, V and the mask as :func:`values`; Attention's nonpad_kv_seqlen (input 6): valid
    key counts in [0, keys], both ends included."""

    def make(rng: np.random.Generator, shape: tuple[int, ...], dtype: np.dtype, i: int) -> Any:
        if i == 6:
            lens = rng.integers(0, keys, shape, endpoint=True).astype(np.int64)
            lens.reshape(-1)[:2] = (keys, 0)[: lens.size]
            return lens
        return values(rng, shape, dtype, i)

    return make
