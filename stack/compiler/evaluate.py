"""NumPy evaluation of IR ops on constant inputs: the engine of constant folding.

Only ops whose result is cheap and exact to compute at compile time are here; the registry
(:func:`register`) is explicit, and :func:`evaluator_for` returns None for ops it lacks so the
folding pass simply leaves them to the device.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from stack.compiler import (
    attention,
    causal_conv_with_state,
    dft,
    einsum,
    gru,
    linear_attention,
    lstm,
    rnn,
    rotary_embedding,
    stft,
    swiglu,
)
from stack.compiler.ir import ElemType, Node, OpType
from stack.compiler.shape_rules import reshape_target

#: An evaluator returns the node's outputs, or None when it declines this node (the folding
#: pass then leaves it to the device).
Evaluator = Callable[[Node, Sequence[np.ndarray]], list[np.ndarray] | None]
_EVAL: dict[OpType, Evaluator] = {}


def register(op: OpType, fn: Evaluator) -> None:
    """Register the NumPy evaluator of ``op``."""
    _EVAL[op] = fn


def evaluator_for(op: OpType) -> Evaluator | None:
    """The evaluator of ``op``, or None when it must run on the device."""
    return _EVAL.get(op)


def _same(x: np.ndarray, like: np.ndarray) -> np.ndarray:
    return np.asarray(x).astype(like.dtype, copy=False)


register(OpType.ADD, lambda n, a: [_same(a[0] + a[1], a[0])])
register(OpType.SUB, lambda n, a: [_same(a[0] - a[1], a[0])])
register(OpType.MUL, lambda n, a: [_same(a[0] * a[1], a[0])])
register(OpType.IDENTITY, lambda n, a: [a[0]])
register(OpType.COPY, lambda n, a: [a[0]])
register(OpType.RELU, lambda n, a: [np.maximum(a[0], 0).astype(a[0].dtype)])


def trunc_divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Integer division truncating toward zero (ONNX, C), exact in every integer width; a zero
    divisor gives 0 like the device kernel."""
    with np.errstate(divide="ignore", over="ignore"):
        q = np.floor_divide(a, b)
        r = np.remainder(a, b)
    return q + ((r != 0) & ((a < 0) != (b < 0))).astype(q.dtype)


def _div(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray]:
    if np.issubdtype(a[0].dtype, np.integer):
        return [_same(trunc_divide(a[0], a[1]), a[0])]
    with np.errstate(divide="ignore", invalid="ignore"):
        return [_same(a[0] / a[1], a[0])]


def _sum(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray]:
    total = a[0]
    for x in a[1:]:
        total = total + x
    return [_same(total, a[0])]


def _reshape(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray]:
    spec = node.attr("shape")
    if spec is not None:
        return [a[0].reshape(spec)]
    spec = tuple(int(v) for v in a[1].ravel())
    return [a[0].reshape(reshape_target(node, a[0].shape, spec))]


def _flatten(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray]:
    axis = int(node.attr("axis", 1))
    axis = axis + a[0].ndim if axis < 0 else axis
    lead = int(np.prod(a[0].shape[:axis], dtype=np.int64))
    return [a[0].reshape(lead, -1) if a[0].size else a[0].reshape(lead, 0)]


def _transpose(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray]:
    return [np.ascontiguousarray(np.transpose(a[0], node.attr("perm")))]


def _concat(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray]:
    return [np.concatenate(list(a), axis=int(node.attr("axis")))]


def _const_of_shape(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray]:
    shape = tuple(int(v) for v in a[0].ravel())
    dtype = ElemType(node.attr("dtype", "float32")).numpy
    return [np.full(shape, node.attr("value", 0), dtype=dtype)]


def _matmul(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray]:
    return [_same(np.matmul(a[0], a[1]), a[0])]


register(OpType.DIV, _div)
register(OpType.SUM, _sum)
register(OpType.RESHAPE, _reshape)
register(OpType.FLATTEN, _flatten)
register(OpType.TRANSPOSE, _transpose)
register(OpType.CONCAT, _concat)
register(OpType.CONSTANT_OF_SHAPE, _const_of_shape)
register(OpType.MATMUL, _matmul)
register(OpType.ROTARY_EMBEDDING, rotary_embedding.evaluate)  # evaluate_ops is at its 300 lines
register(OpType.EINSUM, einsum.evaluate)  # evaluate_ops is at its 300 lines
register(OpType.SWIGLU, swiglu.evaluate)  # evaluate_ops is at its 300 lines
register(OpType.CAUSAL_CONV_WITH_STATE, causal_conv_with_state.evaluate)  # evaluate_ops: 300 lines
register(OpType.DFT, dft.evaluate)  # evaluate_ops is at its 300 lines
register(OpType.STFT, stft.evaluate)  # evaluate_ops is at its 300 lines
register(OpType.ATTENTION, attention.evaluate)  # evaluate_ops is at its 300 lines
register(OpType.RNN, rnn.evaluate)  # evaluate_ops is at its 300 lines
register(OpType.GRU, gru.evaluate)  # evaluate_ops is at its 300 lines
register(OpType.LSTM, lstm.evaluate)  # evaluate_ops is at its 300 lines
register(OpType.LINEAR_ATTENTION, linear_attention.evaluate)  # evaluate_ops: 300 lines

from stack.compiler import evaluate_ops  # noqa: E402,F401  (registers the remaining evaluators)
