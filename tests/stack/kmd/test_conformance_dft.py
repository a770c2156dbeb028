# ruff: noqa: E501 - the case tables read best one case per line
"""Conformance of DFT through the KMD, on every available backend, against a loop over the
places (each output point the transform's sum over the signal's points, in Python's complex
arithmetic on the values the kernel reads, rounded once to the dtype: the kernel, which computes
in float32 for float16 and float32 inputs, must agree within a few units of that precision's
rounding of the row's magnitude): real and complex input, forward and inverse, onesided (RFFT
and IRFFT), dft_length by default, shorter and longer than the signal, every signal axis,
float32, float16 and float64; bit for bit NumPy's FFT in ONNX's reference's precision (float32
and float64); a NaN reaching its own row only, empty tensors; and the kernel's refusal of operands and immediates
that do not fit."""

from __future__ import annotations

import cmath
import math

import numpy as np
import pytest

from stack.kmd import KernelId
from stack.kmd.errors import FenceFailedError
from stack.kmd.kernels.dft import output_shape

K = KernelId.DFT
RNG = np.random.default_rng(63)
DTYPES = [np.float32, np.float16, np.float64]
#: The allowed error per dtype, in units of the row's magnitude sum |z| (float16: its rounding).
TOL = {np.dtype(np.float32): 1e-6, np.dtype(np.float16): 1e-3, np.dtype(np.float64): 1e-14}
#: (name, inverse, onesided)
MODES = [("forward", 0, 0), ("inverse", 1, 0), ("rfft", 0, 1), ("irfft", 1, 1)]


def default_length(n: int, inverse: int, onesided: int) -> int:
    """ONNX's default dft_length: the signal's, IRFFT's from its onesided half."""
    return 2 * (n - 1) if inverse and onesided else n


def loop(x: np.ndarray, axis: int, inverse: int, onesided: int, length: int) -> np.ndarray:
    """output row by row and point by point: sum_n z[n] exp(-+2 pi i k n / N) (/ N inverse) over
    the signal cropped or zero-padded to N points; IRFFT the real part of the inverse of the
    Hermitian spectrum whose first N // 2 + 1 points are z's (cropped or padded)."""
    z = x[..., 0].astype(np.complex128)
    if x.shape[-1] == 2:
        z = z + 1j * x[..., 1].astype(np.float64)
    rows = np.moveaxis(z, axis, -1)
    shape = output_shape(x.shape, axis, inverse, onesided, length)
    out = np.zeros((*rows.shape[:-1], shape[axis], shape[-1]), np.float64)
    half = length // 2 + 1
    for idx in np.ndindex(rows.shape[:-1]):
        row = list(rows[idx])
        if inverse and onesided:  # IRFFT: the Hermitian spectrum of N points
            head = (row + [0j] * half)[:half]
            sig = [head[k] if k < half else head[length - k].conjugate() for k in range(length)]
        else:
            sig = (row + [0j] * length)[:length]
        sign = 1 if inverse else -1
        for k in range(shape[axis]):
            acc = 0j
            for n, v in enumerate(sig):
                acc += v * cmath.exp(sign * 2j * math.pi * k * n / length)
            acc = acc / length if inverse else acc
            out[(*idx, k)] = (acc.real,) if shape[-1] == 1 else (acc.real, acc.imag)
    return np.moveaxis(out, -2, axis).astype(x.dtype)


def run(rig, x: np.ndarray, axis: int, inverse: int, onesided: int, length: int) -> np.ndarray:  # type: ignore[no-untyped-def]
    shape = output_shape(x.shape, axis, inverse, onesided, length)
    (y,) = rig.run_outputs(K, [x], [(shape, x.dtype)], (axis, inverse, onesided, length))
    return y


def assert_matches(got: np.ndarray, want: np.ndarray, x: np.ndarray, length: int) -> None:
    assert got.dtype == want.dtype and got.shape == want.shape
    scale = max(1.0, float(np.abs(x.astype(np.float64)).sum(axis=-1).max()) * max(length, 1))
    np.testing.assert_allclose(got, want, rtol=0, atol=TOL[got.dtype] * scale)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize(("mode", "inverse", "onesided"), MODES, ids=[m[0] for m in MODES])
@pytest.mark.parametrize("size", ["default", "shorter", "longer"])
@pytest.mark.parametrize(
    ("shape", "axis"),
    [
        ((6, 1), 0),
        ((3, 5, 2), 1),
        ((4, 3, 2), 0),
        ((2, 3, 4, 1), 2),
        ((2, 7, 3, 2), 1),
        ((1, 2, 1), 1),
    ],
    ids=str,
)
def test_dft_matches_the_loop(
    backend_rig, shape, axis, size, mode, inverse, onesided, dtype
) -> None:  # type: ignore[no-untyped-def]
    if onesided:  # RFFT takes a real signal, IRFFT a complex one
        shape = (*shape[:-1], 1 + inverse)
    x = RNG.standard_normal(shape).astype(dtype)
    n = default_length(shape[axis], inverse, onesided)
    length = {"default": n, "shorter": max(1, n - 2), "longer": n + 3}[size]
    got = run(backend_rig, x, axis, inverse, onesided, length)
    assert_matches(got, loop(x, axis, inverse, onesided, length), x, length)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: d.__name__)
@pytest.mark.parametrize(
    ("inverse", "onesided", "pair"),
    [(0, 0, 1), (0, 0, 2), (1, 0, 1), (1, 0, 2), (0, 1, 1), (1, 1, 2)],
    ids=["forward real", "forward complex", "inverse real", "inverse complex", "rfft", "irfft"],
)
def test_dft_is_numpy_s_fft_in_the_reference_s_precision(
    rig, inverse, onesided, pair, dtype
) -> None:  # type: ignore[no-untyped-def]
    """On NumPy: bit for bit the FFT ONNX's reference computes (complex64 below float64)."""
    x = RNG.standard_normal((3, 8, pair)).astype(dtype)
    z = x[..., 0] + 1j * x[..., 1] if pair == 2 else x[..., 0]
    if inverse and onesided:
        want = np.fft.irfft(z, n=14, axis=1)[..., None]
    else:
        f = (np.fft.ifft if inverse else np.fft.fft)(z, n=14, axis=1)[:, : 8 if onesided else 14]
        want = np.stack([f.real, f.imag], axis=-1)
    got = run(rig, x, 1, inverse, onesided, 14)
    assert got.tobytes() == want.astype(dtype).tobytes()


def test_the_inverse_undoes_the_forward(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x = RNG.standard_normal((2, 9, 2))
    back = run(backend_rig, run(backend_rig, x, 1, 0, 0, 9), 1, 1, 0, 9)
    np.testing.assert_allclose(back, x, rtol=0, atol=1e-13)
    half = run(backend_rig, x[..., :1].copy(), 1, 0, 1, 9)
    np.testing.assert_allclose(run(backend_rig, half, 1, 1, 1, 9), x[..., :1], rtol=0, atol=1e-13)


def test_a_nan_reaches_its_own_row_only(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x = np.ones((3, 4, 1), np.float32)
    x[1, 2, 0] = np.nan
    y = run(backend_rig, x, 1, 0, 0, 4)
    assert np.isnan(y[1, :, 0]).all() and not np.isnan(y[[0, 2]]).any()
    np.testing.assert_array_equal(y[0, :, 0], [4, 0, 0, 0])


@pytest.mark.parametrize(
    ("shape", "axis", "length"),
    [((0, 4, 2), 1, 4), ((2, 0, 1), 1, 4), ((2, 3, 0, 2), 0, 2)],
    ids=str,
)
def test_empty_tensors(backend_rig, shape, axis, length) -> None:  # type: ignore[no-untyped-def]
    """No batch row: nothing written; an empty signal padded to dft_length: zeros."""
    y = run(backend_rig, np.zeros(shape, np.float32), axis, 0, 0, length)
    assert y.shape == output_shape(shape, axis, 0, 0, length) and not y.any()


F = np.float32


@pytest.mark.parametrize(
    ("x", "out", "ints", "message"),
    [
        (np.ones((4, 1), np.int32), ((4, 2), np.int32), (0, 0, 0, 4), r"input int32\(4, 1\) is not a float \[\.\.\., 1 or 2\]"),
        (np.ones((4,), F), ((4, 2), F), (0, 0, 0, 4), r"input float32\(4,\)"),
        (np.ones((4, 3), F), ((4, 2), F), (0, 0, 0, 4), r"input float32\(4, 3\)"),
        (np.ones((2, 4, 1), F), ((2, 4, 2), F), (2, 0, 0, 4), r"axis 2 is not in \[0, 1\]"),
        (np.ones((2, 4, 1), F), ((2, 4, 2), F), (-1, 0, 0, 4), r"axis -1"),
        (np.ones((2, 4, 1), F), ((2, 4, 2), F), (1, 2, 0, 4), "inverse 2 and onesided 0 must be 0 or 1"),
        (np.ones((2, 4, 1), F), ((2, 4, 2), F), (1, 0, 3, 4), "onesided 3"),
        (np.ones((2, 4, 1), F), ((2, 1, 2), F), (1, 0, 1, 0), "dft_length 0 is below 1"),
        (np.ones((2, 4, 1), F), ((2, 5, 2), F), (1, 0, 0, 4), r"output float32\(2, 5, 2\) is not float32\(2, 4, 2\)"),
        (np.ones((2, 4, 1), F), ((2, 4, 2), np.float64), (1, 0, 0, 4), r"output float64\(2, 4, 2\)"),
        (np.ones((2, 4, 1), F), ((2, 4, 2), F), (1, 0, 1, 4), r"is not float32\(2, 3, 2\)"),
        (np.ones((2, 3, 2), F), ((2, 4, 2), F), (1, 1, 1, 4), r"is not float32\(2, 4, 1\)"),
        (np.ones((2, 4, 2), F), ((2, 3, 2), F), (1, 0, 1, 4), r"RFFT input \(2, 4, 2\) is not \[\.\.\., 1\]"),
        (np.ones((2, 3, 1), F), ((2, 4, 1), F), (1, 1, 1, 4), r"IRFFT input \(2, 3, 1\) is not \[\.\.\., 2\]"),
    ],
    ids=["int input", "rank 1", "pair of 3", "axis of the pair", "negative axis", "inverse 2",
         "onesided 3", "length 0", "output shape", "output dtype", "rfft shape", "irfft shape",
         "complex rfft", "real irfft"],
)  # fmt: skip
def test_operands_that_do_not_fit_are_a_fault(rig, x, out, ints, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(FenceFailedError, match=message):
        rig.run_outputs(K, [x], [out], ints)
