"""STFT: its shape and dtype rule (registered into :mod:`stack.compiler.shape_rules`' registry on
import), the check of its operands and attributes the importer shares, and its constant-folding
evaluator (registered by :mod:`stack.compiler.evaluate`); each frame's transform is DFT's
(:func:`stack.compiler.dft.transform`).

signal is a float tensor [B, N, 1 or 2]: a real signal, or a complex one as (real, imaginary)
pairs on the last axis; the optional window is [frame_length] of signal's type. The attributes
are resolved by the importer from ONNX's constant inputs and its attribute: ``frame_step`` (at
least 1), ``frame_length`` (1 to N; ONNX's default already applied: the window's length, else
N) and ``onesided`` (0 or 1). Frame f is signal[:, f * frame_step : f * frame_step +
frame_length], F = (N - frame_length) // frame_step + 1 of them; the result is of signal's type,
[B, F, M, 2] with M = frame_length // 2 + 1 when onesided (for a complex signal too, as ONNX's
shape inference and reference), else frame_length. Folding computes as the device kernel does
(:mod:`stack.kmd.kernels.dft`): each frame times the window in signal's type, as ONNX's
reference, then DFT's transform over frame_length points, rounded once to signal's type.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from stack.compiler.dft import transform
from stack.compiler.ir import Node, OpType, TensorType
from stack.compiler.shape_rules import _fail, _need, register


def output_shape(shape: tuple[int, ...], step: int, length: int, onesided: int) -> tuple[int, ...]:
    """The STFT's result shape for a signal ``shape`` (the operands already checked)."""
    return (shape[0], (shape[1] - length) // step + 1, length // 2 + 1 if onesided else length, 2)


def input_problem(x: TensorType) -> str | None:
    """What makes ``x`` no STFT signal (a float [B, N, 1 or 2]), or None when it is one."""
    if not x.dtype.is_float or len(x.shape) != 3 or x.shape[-1] not in (1, 2):
        return f"takes a float signal [B, N, 1 or 2] (real or complex), got {x}"
    return None


def problem(
    x: TensorType, window: TensorType | None, step: int, length: int, onesided: int
) -> str | None:
    """What makes this signal, window and these resolved attributes no STFT's, or None when
    they fit."""
    why = input_problem(x)
    if why is not None:
        return why
    if step < 1:
        return f"takes a frame_step of at least 1, got {step}"
    if not 1 <= length <= x.shape[1]:
        return f"takes a frame_length from 1 to the signal's {x.shape[1]} for {x}, got {length}"
    if onesided not in (0, 1):
        return f"takes onesided of 0 or 1, got {onesided}"
    if window is not None and (window.dtype != x.dtype or window.shape != (length,)):
        return f"takes a window {x.dtype.value}[{length}] (frame_length's), got {window}"
    return None


def _attrs(node: Node) -> tuple[int, int, int]:
    return (
        int(node.attr("frame_step", 0)),
        int(node.attr("frame_length", 0)),
        int(node.attr("onesided", 1)),
    )


@register(OpType.STFT)
def _stft(node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]) -> list:
    x = _need(node, t, 0)
    window = t[1] if len(t) > 1 else None
    why = problem(x, window, *_attrs(node))
    if why is not None:
        raise _fail(node, f"STFT {why}")
    return [TensorType(x.dtype, output_shape(x.shape, *_attrs(node)))]


def evaluate(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray]:
    """The STFT of a constant signal (and window), as the device kernel computes it."""
    x = np.asarray(a[0])
    step, length, onesided = _attrs(node)
    count = output_shape(x.shape, step, length, onesided)[1]
    frames = x[:, (np.arange(count) * step)[:, None] + np.arange(length)]  # [B, F, L, C]
    if len(a) > 1:
        with np.errstate(all="ignore"):
            frames = frames * np.asarray(a[1])[:, None]
    return [transform(frames, 2, 0, onesided, length)]
