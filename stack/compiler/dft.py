"""DFT: its shape and dtype rule (registered into :mod:`stack.compiler.shape_rules`' registry on
import), the check of its operand and attributes the importer shares, and its constant-folding
evaluator (registered by :mod:`stack.compiler.evaluate`, since evaluate_ops is at its 300
lines); op_rules, where CumSum's rule is, is near its 300 lines too.

input is a float tensor [..., 1 or 2]: a real signal, or a complex one as (real, imaginary)
pairs on the last axis; a onesided forward transform (RFFT) takes a real one, a onesided inverse
(IRFFT) a complex one, as ONNX's shape inference requires. The attributes are resolved by the
importer from ONNX's constant inputs: ``axis`` (non-negative, 0 to rank - 2: never the pair's
axis), ``dft_length`` (at least 1; ONNX's default already applied), ``inverse`` and ``onesided``
(0 or 1). The result is of input's dtype: [..., M, ..., 2] with M = dft_length on axis, or
dft_length // 2 + 1 for a onesided forward transform (RFFT), but [..., dft_length, ..., 1]
(real) for a onesided inverse (IRFFT). Folding computes as the device kernel does
(:mod:`stack.kmd.kernels.dft`): NumPy's FFT in ONNX's reference's precision (complex64 for
float16 and float32, complex128 for float64; a real input transformed as real), the signal
cropped or zero-padded to dft_length, the inverse scaled by 1 / dft_length, rounded once to
input's dtype.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from stack.compiler.ir import Node, OpType, TensorType
from stack.compiler.shape_rules import _fail, _need, register


def output_shape(
    shape: tuple[int, ...], axis: int, inverse: int, onesided: int, length: int
) -> tuple[int, ...]:
    """The DFT's result shape for an input ``shape`` (the operands already checked)."""
    points = length // 2 + 1 if onesided and not inverse else length
    pair = 1 if onesided and inverse else 2
    return (*shape[:axis], points, *shape[axis + 1 : -1], pair)


def input_problem(x: TensorType) -> str | None:
    """What makes ``x`` no DFT input (a float [..., 1 or 2]), or None when it is one."""
    if not x.dtype.is_float or len(x.shape) < 2 or x.shape[-1] not in (1, 2):
        return f"takes a float input [..., 1 or 2] (real or complex), got {x}"
    return None


def problem(x: TensorType, axis: int, inverse: int, onesided: int, length: int) -> str | None:
    """What makes this input and these resolved attributes no DFT's, or None when they fit."""
    why = input_problem(x)
    if why is not None:
        return why
    if not 0 <= axis <= len(x.shape) - 2:
        return f"takes an axis in [0, {len(x.shape) - 2}] (not the last) for input {x}, got {axis}"
    if inverse not in (0, 1) or onesided not in (0, 1):
        return f"takes inverse and onesided of 0 or 1, got {inverse} and {onesided}"
    if onesided and x.shape[-1] != 1 + inverse:
        kind = "a complex input [..., 2] for IRFFT" if inverse else "a real input [..., 1] for RFFT"
        return f"takes {kind} (onesided {onesided}, inverse {inverse}), got {x}"
    if length < 1:
        return f"takes a dft_length of at least 1 for input {x} on axis {axis}, got {length}"
    return None


def _attrs(node: Node) -> tuple[int, int, int, int]:
    return (
        int(node.attr("axis", 1)),
        int(node.attr("inverse", 0)),
        int(node.attr("onesided", 0)),
        int(node.attr("dft_length", 0)),
    )


@register(OpType.DFT)
def _dft(node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]) -> list:
    x = _need(node, t, 0)
    why = problem(x, *_attrs(node))
    if why is not None:
        raise _fail(node, f"DFT {why}")
    return [TensorType(x.dtype, output_shape(x.shape, *_attrs(node)))]


def evaluate(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The DFT of a constant input, as the device kernel computes it."""
    return [transform(np.asarray(a[0]), *_attrs(node))]


def transform(x: np.ndarray, axis: int, inverse: int, onesided: int, length: int) -> np.ndarray:
    """The DFT of ``x`` [..., 1 or 2] as the device kernel computes it, of ``x``'s dtype (the
    operands already checked; STFT's evaluator transforms its frames with it too)."""
    y = np.zeros(output_shape(x.shape, axis, inverse, onesided, length), x.dtype)
    if y.size == 0:
        return y
    real = np.float64 if x.dtype == np.float64 else np.float32
    z = x[..., 0].astype(real)
    if x.shape[-1] == 2:  # set, not added as 1j * imaginary: an infinity stays one
        z = z.astype(np.result_type(real, np.complex64))
        z.imag = x[..., 1]
    with np.errstate(all="ignore"):  # IEEE results (inf - inf) are the answer
        if inverse and onesided:
            y[...] = np.fft.irfft(z, n=length, axis=axis)[..., None]
            return y
        f = (np.fft.ifft if inverse else np.fft.fft)(z, n=length, axis=axis)
        f = np.take(f, np.arange(y.shape[axis]), axis=axis)
        y[...] = np.stack([f.real, f.imag], axis=-1)
    return y
