"""SwiGLU: its shape and dtype rule (registered into :mod:`stack.compiler.shape_rules`' registry
on import), the check of its operands the importer shares, and its constant-folding evaluator
(registered by :mod:`stack.compiler.evaluate`, since evaluate_ops is at its 300 lines);
shape_rules, where Mul's rule is, is near its 300 lines too.

A (the gate) is a float tensor and B (the linear value) of A's type, element type and shape
alike: SwiGLU does not broadcast. The result is A's type, Y = A * sigmoid(alpha * A) * B, the
Swish of the gate (``alpha``, default 1.0) times the value. Folding computes as the device
kernel does (:mod:`stack.kmd.kernels.swiglu`): float64 for every float dtype, the sigmoid as
1 / (1 + e) or e / (1 + e) with e = exp(-|alpha * A|), rounded once to A's dtype.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from stack.compiler.ir import Node, OpType, TensorType
from stack.compiler.shape_rules import _fail, _need, register


def problem(a: TensorType, b: TensorType) -> str | None:
    """What makes these operands no SwiGLU's (a float A, B of A's type), or None when they fit."""
    if not a.dtype.is_float:
        return f"takes a float16, float32 or float64 A, got {a}"
    if b != a:
        return f"takes B of A's type {a} (no broadcasting), got {b}"
    return None


@register(OpType.SWIGLU)
def _swiglu(node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]) -> list:
    a, b = _need(node, t, 0), _need(node, t, 1)
    why = problem(a, b)
    if why is not None:
        raise _fail(node, f"SwiGLU {why}")
    return [a]


def evaluate(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Y of constant A and B, as the device kernel computes it."""
    gate, value = np.asarray(a[0]), np.asarray(a[1])
    g64, v64 = gate.astype(np.float64), value.astype(np.float64)
    with np.errstate(all="ignore"):  # IEEE results (inf * 0, overflow) are the answer
        t = float(node.attr("alpha", 1.0)) * g64
        e = np.exp(-np.abs(t))
        sig = np.where(t >= 0, 1 / (1 + e), e / (1 + e))
        return [(g64 * sig * v64).astype(gate.dtype)]
