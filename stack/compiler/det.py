"""Det: its shape and dtype rule (registered into :mod:`stack.compiler.shape_rules`' registry on
import) and its constant-folding evaluator (registered by :mod:`stack.compiler.evaluate_ops`);
shape_rules, where MatMul's rule is, is near its 300 lines and evaluate_ops at them.

X is a float tensor [*, M, M] (rank at least 2, its trailing two axes equal); the result is one
determinant per trailing square matrix, [*] of X's dtype (a scalar for a 2-D X). Folding
computes as the device kernel does (:mod:`stack.kmd.kernels.det`): in float64 for every float
dtype, rounded once to X's; an empty matrix has determinant 1 and a matrix holding a NaN a NaN
one, so a folded Det gives the answer the device would.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from stack.compiler.ir import Node, OpType, TensorType
from stack.compiler.shape_rules import _fail, _need, register


@register(OpType.DET)
def _det(node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]) -> list:
    x = _need(node, t, 0)
    if not x.dtype.is_float:
        raise _fail(node, f"Det takes a float X, got {x}")
    if len(x.shape) < 2 or x.shape[-1] != x.shape[-2]:
        raise _fail(node, f"Det takes X of shape [*, M, M], got {x}")
    return [TensorType(x.dtype, x.shape[:-2])]


def evaluate(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray]:
    """det of each trailing matrix of the constant, in float64, rounded to its dtype."""
    x = np.asarray(a[0])
    if x.size == 0:
        return [np.ones(x.shape[:-2], x.dtype)]
    wide = x.astype(np.float64)
    with np.errstate(all="ignore"):  # IEEE results (inf, NaN) are the answer, as on the device
        d = np.where(np.isnan(wide).any(axis=(-2, -1)), np.nan, np.linalg.det(wide))
        return [np.asarray(d).astype(x.dtype)]
