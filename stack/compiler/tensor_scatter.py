"""TensorScatter (the KV-cache update): its shape and dtype rule (registered into
:mod:`stack.compiler.shape_rules`' registry on import) and its constant-folding evaluator
(registered by :mod:`stack.compiler.evaluate_ops`); op_rules and evaluate_ops are at their
300 lines.

``past_cache`` and ``update`` share a dtype and every axis but the sequence ``axis`` (never the
batch axis 0), on which ``update`` is at most as long; the optional ``write_indices`` is
int64 [batch]. The result is ``past_cache``'s type.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from stack.compiler.ir import ElemType, Node, OpType, TensorType
from stack.compiler.shape_rules import _fail, _need, register

#: TensorScatter's ``mode`` values (how a write past the sequence axis is taken).
TENSOR_SCATTER_MODES = ("linear", "circular")


@register(OpType.TENSOR_SCATTER)
def _tensor_scatter(
    node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]
) -> list:
    past, upd = _need(node, t, 0), _need(node, t, 1)
    axis = int(node.attr("axis", len(past.shape) - 2))
    if not 0 < axis < len(past.shape) or len(upd.shape) != len(past.shape):
        raise _fail(node, f"axis {axis} must be a non-batch axis of both past_cache {past} "
                    f"and update {upd}")  # fmt: skip
    if (
        upd.dtype != past.dtype
        or upd.shape[axis] > past.shape[axis]
        or any(
            u != n for d, (u, n) in enumerate(zip(upd.shape, past.shape, strict=True)) if d != axis
        )
    ):
        raise _fail(node, f"update {upd} must be past_cache {past} at most as long on axis {axis}")
    index = t[2] if len(t) > 2 else None
    if index is not None and (index.dtype is not ElemType.I64 or index.shape != past.shape[:1]):
        raise _fail(node, f"write_indices {index} must be int64[{past.shape[0]}]")
    mode = node.attr("mode", "linear")
    if mode not in TENSOR_SCATTER_MODES:
        raise _fail(node, f"unknown mode {mode!r}; known: {', '.join(TENSOR_SCATTER_MODES)}")
    return [past]


def evaluate(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray] | None:
    """Batch b's update steps written on ``axis`` from write_indices[b] (absent: 0), modulo the
    axis in circular mode. Declines a linear write outside the axis: the device kernel reports
    it."""
    past, upd = a[0], a[1]
    axis = int(node.attr("axis"))
    cache, steps = past.shape[axis], upd.shape[axis]
    start = a[2].astype(np.int64) if len(a) > 2 else np.zeros(past.shape[0], np.int64)
    at = start.reshape(-1, 1) + np.arange(steps, dtype=np.int64).reshape(1, -1)
    if node.attr("mode", "linear") == "circular":
        at = at % cache if cache else at
    elif at.size and (at.min() < 0 or at.max() >= cache):
        return None
    out = past.copy()
    if at.size and out.size:
        rows = np.arange(past.shape[0]).reshape(-1, 1)
        np.moveaxis(out, axis, 1)[rows, at] = np.moveaxis(upd, axis, 1)
    return [out]
