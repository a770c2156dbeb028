# ruff: noqa: E501 - the case tables read best one case per line
"""Conformance of STFT through the KMD, on every available backend, against a loop over the
places (each output point the sum over its frame's points of the signal times the window times
exp(-2 pi i k n / L), in Python's complex arithmetic on the values the kernel reads, rounded once
to the dtype: the kernel, which computes in float32 for float16 and float32 signals, must agree
within a few units of that precision's rounding of the frame's magnitude): real and complex
signals, with and without a window, onesided 0 and 1, steps shorter, equal to and longer than
the frame, one frame, float32, float16 and float64; bit for bit NumPy's FFT of the windowed
frames on NumPy (ONNX's reference's arithmetic); a NaN reaching its own frames only; an empty
batch; and the kernel's refusal of operands and immediates that do not fit."""

from __future__ import annotations

import cmath
import math

import numpy as np
import pytest

from stack.kmd import KernelId
from stack.kmd.errors import FenceFailedError
from stack.kmd.kernels.dft import stft_shape

K = KernelId.STFT
RNG = np.random.default_rng(64)
DTYPES = [np.float32, np.float16, np.float64]
#: The allowed error per dtype, in units of the frame's magnitude sum (float16: its rounding).
TOL = {np.dtype(np.float32): 1e-6, np.dtype(np.float16): 1e-3, np.dtype(np.float64): 1e-14}


def loop(x: np.ndarray, w: np.ndarray | None, step: int, length: int, onesided: int) -> np.ndarray:
    """output frame by frame and point by point: sum_n x[b, f * step + n] w[n] exp(-2 pi i k n / L)."""
    shape = stft_shape(x.shape, step, length, onesided)
    out = np.zeros(shape, np.float64)
    weights = [1.0] * length if w is None else [float(v) for v in w]
    for b, f in np.ndindex(shape[:2]):
        sig = []
        for n in range(length):
            v = complex(
                float(x[b, f * step + n, 0]),
                float(x[b, f * step + n, 1]) if x.shape[-1] == 2 else 0.0,
            )
            sig.append(v * weights[n])
        for k in range(shape[2]):
            acc = sum(
                (v * cmath.exp(-2j * math.pi * k * n / length) for n, v in enumerate(sig)), 0j
            )
            out[b, f, k] = (acc.real, acc.imag)
    return out.astype(x.dtype)


def run(
    rig, x: np.ndarray, w: np.ndarray | None, step: int, length: int, onesided: int
) -> np.ndarray:  # type: ignore[no-untyped-def]
    shape = stft_shape(x.shape, step, length, onesided)
    ins = [x] if w is None else [x, w]
    (y,) = rig.run_outputs(K, ins, [(shape, x.dtype)], (step, length, onesided))
    return y


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.__name__)
@pytest.mark.parametrize("onesided", [0, 1])
@pytest.mark.parametrize("windowed", [False, True], ids=["no window", "window"])
@pytest.mark.parametrize("pair", [1, 2], ids=["real", "complex"])
@pytest.mark.parametrize(
    ("batch", "n", "step", "length"),
    [(1, 16, 4, 8), (3, 20, 5, 5), (2, 13, 6, 4), (2, 7, 1, 7), (1, 9, 3, 1)],
    ids=["overlapping", "adjacent", "gapped", "one frame", "one point"],
)
def test_stft_matches_the_loop(
    backend_rig, batch, n, step, length, pair, windowed, onesided, dtype
) -> None:  # type: ignore[no-untyped-def]
    x = RNG.standard_normal((batch, n, pair)).astype(dtype)
    w = RNG.random(length).astype(dtype) if windowed else None
    got = run(backend_rig, x, w, step, length, onesided)
    want = loop(x, w, step, length, onesided)
    assert got.dtype == want.dtype and got.shape == want.shape
    scale = max(1.0, float(np.abs(x.astype(np.float64)).sum(axis=-1).max()) * length)
    np.testing.assert_allclose(got, want, rtol=0, atol=TOL[got.dtype] * scale)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=lambda d: d.__name__)
@pytest.mark.parametrize("onesided", [0, 1])
@pytest.mark.parametrize("pair", [1, 2], ids=["real", "complex"])
def test_stft_is_numpy_s_fft_of_the_windowed_frames(rig, pair, onesided, dtype) -> None:  # type: ignore[no-untyped-def]
    """On NumPy: bit for bit what ONNX's reference computes (frames times the window in the
    signal's dtype, then the FFT in complex64 below float64)."""
    x = RNG.standard_normal((2, 30, pair)).astype(dtype)
    w = RNG.random(8).astype(dtype)
    frames = np.stack([x[:, f * 3 : f * 3 + 8] * w[:, None] for f in range(8)], axis=1)
    z = frames[..., 0] + 1j * frames[..., 1] if pair == 2 else frames[..., 0]
    f = np.fft.fft(z, n=8, axis=2)[:, :, : 5 if onesided else 8]
    want = np.stack([f.real, f.imag], axis=-1).astype(dtype)
    assert run(rig, x, w, 3, 8, onesided).tobytes() == want.tobytes()


def test_a_nan_reaches_its_own_frames_only(backend_rig) -> None:  # type: ignore[no-untyped-def]
    x = np.ones((2, 12, 1), np.float32)
    x[1, 5, 0] = np.nan  # in frames 1 (points 2..5) and 2 (4..7) of a step of 2 and length 4
    y = run(backend_rig, x, None, 2, 4, 1)
    assert [bool(np.isnan(y[1, f]).any()) for f in range(5)] == [False, True, True, False, False]
    assert not np.isnan(y[0]).any()
    np.testing.assert_array_equal(y[0, :, :, 0], [[4, 0, 0]] * 5)


def test_an_empty_batch_writes_nothing(backend_rig) -> None:  # type: ignore[no-untyped-def]
    y = run(backend_rig, np.zeros((0, 8, 2), np.float32), np.ones(4, np.float32), 2, 4, 0)
    assert y.shape == (0, 3, 4, 2)


F = np.float32


@pytest.mark.parametrize(
    ("ins", "out", "ints", "message"),
    [
        ([np.ones((1, 8, 1), np.int32)], ((1, 3, 3, 2), np.int32), (2, 4, 1), r"signal int32\(1, 8, 1\) is not a float \[B, N, 1 or 2\]"),
        ([np.ones((8, 1), F)], ((1, 3, 3, 2), F), (2, 4, 1), r"signal float32\(8, 1\)"),
        ([np.ones((1, 8, 3), F)], ((1, 3, 3, 2), F), (2, 4, 1), r"signal float32\(1, 8, 3\)"),
        ([np.ones((1, 8, 1), F)], ((1, 3, 3, 2), F), (0, 4, 1), r"frame_step 0 \(>= 1\), frame_length 4 \(1 to 8\) or onesided 1 \(0 or 1\) is out of range"),
        ([np.ones((1, 8, 1), F)], ((1, 3, 3, 2), F), (2, 9, 1), "frame_length 9"),
        ([np.ones((1, 8, 1), F)], ((1, 3, 3, 2), F), (2, 0, 1), "frame_length 0"),
        ([np.ones((1, 8, 1), F)], ((1, 3, 3, 2), F), (2, 4, 2), "onesided 2"),
        ([np.ones((1, 8, 1), F), np.ones(5, F)], ((1, 3, 3, 2), F), (2, 4, 1), r"window float32\(5,\) is not float32\(4,\)"),
        ([np.ones((1, 8, 1), F), np.ones(4, np.float64)], ((1, 3, 3, 2), F), (2, 4, 1), r"window float64\(4,\)"),
        ([np.ones((1, 8, 1), F)], ((1, 3, 4, 2), F), (2, 4, 1), r"output float32\(1, 3, 4, 2\) is not float32\(1, 3, 3, 2\)"),
        ([np.ones((1, 8, 1), F)], ((1, 3, 3, 2), np.float64), (2, 4, 1), r"output float64\(1, 3, 3, 2\)"),
    ],
    ids=["int signal", "rank 2", "pair of 3", "step 0", "length past the signal", "length 0",
         "onesided 2", "window length", "window dtype", "output shape", "output dtype"],
)  # fmt: skip
def test_operands_that_do_not_fit_are_a_fault(rig, ins, out, ints, message) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(FenceFailedError, match=message):
        rig.run_outputs(K, ins, [out], ints)
