"""The discrete Fourier transform along one axis (ONNX DFT, opsets 17 and 20) and the
short-time Fourier transform (ONNX STFT, opset 17) for any ``xp``: DFT and STFT.

input is [..., n, ..., C] of a float dtype: its last axis holds a real signal (C = 1) or a
complex one as the pair (real, imaginary) (C = 2); the transform runs along ``axis`` (0 to
rank - 2: never the pair's axis) over ``dft_length`` points, the signal cropped to them or
padded with zeros. With z the input as complex numbers and N = dft_length:

    forward (inverse 0):            y[k] = sum_n z[n] exp(-2 pi i k n / N),   k < N
    inverse (inverse 1):            y[n] = 1/N sum_k z[k] exp(2 pi i k n / N),  n < N
    onesided forward (RFFT):        the first N // 2 + 1 of the forward's k
    onesided inverse (IRFFT):       the real signal of N points whose spectrum is Hermitian and
                                    begins with z's first N // 2 + 1 points (cropped or zero
                                    padded), the imaginary parts of its DC and Nyquist terms
                                    dropped

RFFT takes a real input, IRFFT a complex one (as ONNX's shape inference requires). output is
[..., M, ..., 2] (complex) of input's dtype, M = N or N // 2 + 1 on ``axis``, but for IRFFT
[..., N, ..., 1] (real). The arithmetic is ``xp.fft``'s (NumPy's pocketfft, cuFFT through
CuPy) in the precision ONNX's reference and onnxruntime take: complex64 for float16 and float32,
complex128 for float64 (:func:`precision`), the result rounded once to output's dtype; a real
input is transformed as real, as the reference does. (Transforming float32 in complex128 would
be more exact, but then a value the reference leaves at float32's rounding noise, such as the
imaginary parts of an inverse transform of a Hermitian spectrum, differs from it by more than
the node tests' absolute tolerance of 1e-7.) A NaN or an infinity reaches the points of its own
row only, as the transform's sums carry it (which of them, the FFT library decides). Operands
of another dtype or shape, or immediates out of range, are a kernel fault (a ValueError).

STFT takes signal [B, N, C] (C = 1 real, 2 complex) of a float dtype, the optional window [L] of
its dtype and the int immediates frame_step (>= 1), frame_length L (1 to N) and onesided. Frame f
is signal[:, f * frame_step : f * frame_step + L], F = (N - L) // frame_step + 1 of them, each
multiplied by the window in signal's dtype (as ONNX's reference) and transformed forward over L
points as DFT's along the frame's axis: output [B, F, M, 2] of signal's dtype, M = L // 2 + 1
when onesided (the forward transform's first points; for a complex signal too, as the reference
and onnxruntime crop it), else L (:func:`stft_shape`, which the UMD's translator infers with).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from stack.kmd.kernels.ids import KernelId


def output_shape(
    shape: tuple[int, ...], axis: int, inverse: int, onesided: int, length: int
) -> tuple[int, ...]:
    """DFT's output shape for an input ``shape`` (the UMD's translator infers with it too)."""
    points = length // 2 + 1 if onesided and not inverse else length
    pair = 1 if onesided and inverse else 2
    return (*shape[:axis], points, *shape[axis + 1 : -1], pair)


def check(ins: list[Any], outs: list[Any], ints: tuple[int, ...]) -> tuple[int, int, int, int]:
    """axis, inverse, onesided and dft_length, checked against the operands (ValueError naming
    what does not fit)."""
    x, y = ins[0], outs[0]
    axis, inverse, onesided, length = (int(v) for v in ints[:4])
    if x.dtype.kind != "f" or x.ndim < 2 or x.shape[-1] not in (1, 2):
        raise ValueError(f"DFT input {x.dtype}{x.shape} is not a float [..., 1 or 2]")
    if not 0 <= axis < x.ndim - 1:
        raise ValueError(f"DFT axis {axis} is not in [0, {x.ndim - 2}] for input {x.shape}")
    if inverse not in (0, 1) or onesided not in (0, 1):
        raise ValueError(f"DFT inverse {inverse} and onesided {onesided} must be 0 or 1")
    if onesided and x.shape[-1] != 1 + inverse:
        raise ValueError(f"DFT {'IRFFT' if inverse else 'RFFT'} input {x.shape} is not "
                         f"[..., {1 + inverse}]")  # fmt: skip
    if length < 1:
        raise ValueError(f"DFT dft_length {length} is below 1")
    want = output_shape(x.shape, axis, inverse, onesided, length)
    if y.dtype != x.dtype or y.shape != want:
        raise ValueError(f"DFT output {y.dtype}{y.shape} is not {x.dtype}{want}")
    return axis, inverse, onesided, length


def precision(dtype: Any) -> Any:
    """The real dtype DFT computes an input of ``dtype`` in: float64 for float64, else float32."""
    return np.dtype(np.float64 if dtype == np.float64 else np.float32)


def transform(xp: Any, x: Any, axis: int, inverse: int, onesided: int, length: int) -> Any:
    """The transform of ``x`` as [..., 1 or 2] in :func:`precision` (the operands already
    checked)."""
    real = precision(x.dtype)
    if x.shape[-1] == 2:  # the (real, imaginary) pairs read as complex numbers, infinities kept
        z = xp.ascontiguousarray(x, dtype=real).view(np.result_type(real, np.complex64))[..., 0]
    else:
        z = x[..., 0].astype(real)
    if inverse and onesided:
        return xp.fft.irfft(z, n=length, axis=axis)[..., None]
    f = (xp.fft.ifft if inverse else xp.fft.fft)(z, n=length, axis=axis)
    if onesided:
        f = xp.take(f, xp.arange(length // 2 + 1), axis=axis)
    return xp.stack([f.real, f.imag], axis=-1)


def dft(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """output = the DFT of input along axis over dft_length points; ints: axis, inverse,
    onesided, dft_length. Operands that do not fit: ValueError."""
    axis, inverse, onesided, length = check(ins, outs, ints)
    y = outs[0]
    if y.size == 0:
        return
    with np.errstate(all="ignore"):  # IEEE results (inf - inf) are the answer
        xp.copyto(y, transform(xp, ins[0], axis, inverse, onesided, length), casting="unsafe")


def stft_shape(shape: tuple[int, ...], step: int, length: int, onesided: int) -> tuple[int, ...]:
    """STFT's output shape for a signal ``shape`` [B, N, C] (the UMD's translator infers with
    it too): [B, (N - length) // step + 1, length // 2 + 1 or length, 2]."""
    points = length // 2 + 1 if onesided else length
    return (shape[0], (shape[1] - length) // step + 1, points, 2)


def stft_check(ins: list[Any], outs: list[Any], ints: tuple[int, ...]) -> tuple[int, int, int]:
    """frame_step, frame_length and onesided, checked against the operands (ValueError naming
    what does not fit)."""
    x, y = ins[0], outs[0]
    step, length, onesided = (int(v) for v in ints[:3])
    if x.dtype.kind != "f" or x.ndim != 3 or x.shape[-1] not in (1, 2):
        raise ValueError(f"STFT signal {x.dtype}{x.shape} is not a float [B, N, 1 or 2]")
    if step < 1 or not 1 <= length <= x.shape[1] or onesided not in (0, 1):
        n = x.shape[1]
        raise ValueError(f"STFT frame_step {step} (>= 1), frame_length {length} (1 to {n}) or "
                         f"onesided {onesided} (0 or 1) is out of range")  # fmt: skip
    if len(ins) > 1 and (ins[1].dtype != x.dtype or ins[1].shape != (length,)):
        raise ValueError(f"STFT window {ins[1].dtype}{ins[1].shape} is not {x.dtype}{(length,)}")
    want = stft_shape(x.shape, step, length, onesided)
    if y.dtype != x.dtype or y.shape != want:
        raise ValueError(f"STFT output {y.dtype}{y.shape} is not {x.dtype}{want}")
    return step, length, onesided


def stft(
    xp: Any, ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    """output = the DFT of each windowed frame of signal; ints: frame_step, frame_length,
    onesided. Operands that do not fit: ValueError."""
    step, length, onesided = stft_check(ins, outs, ints)
    x, y = ins[0], outs[0]
    if y.size == 0:
        return
    starts = xp.arange(y.shape[1]) * step
    frames = x[:, starts[:, None] + xp.arange(length)[None, :]]  # [B, F, L, C]
    with np.errstate(all="ignore"):  # IEEE results (inf - inf) are the answer
        if len(ins) > 1:
            frames = frames * ins[1][:, None]
        xp.copyto(y, transform(xp, frames, 2, 0, onesided, length), casting="unsafe")


TABLE = {KernelId.DFT: dft, KernelId.STFT: stft}
