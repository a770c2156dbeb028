"""Constant-folding evaluators of the point-wise, reduction and indexing ops (registered into
:mod:`stack.compiler.evaluate` on import).

They follow the device kernels' semantics exactly (ONNX's): float16 computes through float32,
integer arithmetic stays integral, a zero integer divisor gives 0, negative indices count from
the end. UNARY folds only the functions that are exact in every implementation (sign, rounding,
square root...); transcendental ones are left to the device. A differential test runs every
evaluator against the device kernel.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from stack.compiler import negative_log_likelihood_loss, softmax_cross_entropy_loss, tensor_scatter
from stack.compiler.bitcast import evaluate as _bitcast
from stack.compiler.det import evaluate as _det
from stack.compiler.evaluate import register
from stack.compiler.ir import ElemType, Node, OpType, TensorType
from stack.compiler.spatial_rules import unpool_shape

_UNARY: dict[str, Callable[[np.ndarray, Node], np.ndarray]] = {
    "Neg": lambda x, n: np.negative(x),
    "Abs": lambda x, n: np.abs(x),
    "Sqrt": lambda x, n: np.sqrt(x),
    "Reciprocal": lambda x, n: np.reciprocal(x),
    "Ceil": lambda x, n: np.ceil(x),
    "Floor": lambda x, n: np.floor(x),
    "Round": lambda x, n: np.rint(x),
    "Sign": lambda x, n: np.sign(x) if x.dtype.kind != "u" else (x > 0).astype(x.dtype),
    "Not": lambda x, n: np.logical_not(x),
    "BitwiseNot": lambda x, n: np.invert(x),
    "IsNaN": lambda x, n: np.isnan(x),
}


def _f32(x: np.ndarray) -> np.ndarray:
    return x.astype(np.float32) if x.dtype == np.float16 else x


def _unary(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray] | None:
    fn = _UNARY.get(str(node.attr("fn")))
    if fn is None:
        return None
    x = a[0]
    with np.errstate(all="ignore"):
        y = fn(_f32(x), node)
    return [y if y.dtype == np.bool_ else y.astype(x.dtype)]


def _pow(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    if a.dtype.kind == "f":
        return np.power(a, b.astype(a.dtype))
    if b.dtype.kind == "f":
        return np.power(a.astype(np.float64), b.astype(np.float64))
    return np.power(a, b.astype(a.dtype))


_BINARY: dict[str, Callable[[np.ndarray, np.ndarray, int], Any]] = {
    "Pow": lambda a, b, i: _pow(a, b),
    "Mod": lambda a, b, i: np.fmod(a, b) if i else np.mod(a, b),
    "Min": lambda a, b, i: np.minimum(a, b),
    "Max": lambda a, b, i: np.maximum(a, b),
    "Equal": lambda a, b, i: np.equal(a, b),
    "Less": lambda a, b, i: np.less(a, b),
    "LessOrEqual": lambda a, b, i: np.less_equal(a, b),
    "Greater": lambda a, b, i: np.greater(a, b),
    "GreaterOrEqual": lambda a, b, i: np.greater_equal(a, b),
    "And": lambda a, b, i: np.logical_and(a, b),
    "Or": lambda a, b, i: np.logical_or(a, b),
    "Xor": lambda a, b, i: np.logical_xor(a, b),
    "BitwiseAnd": lambda a, b, i: np.bitwise_and(a, b),
    "BitwiseOr": lambda a, b, i: np.bitwise_or(a, b),
    "BitwiseXor": lambda a, b, i: np.bitwise_xor(a, b),
    "BitShiftLeft": lambda a, b, i: np.left_shift(a, b),
    "BitShiftRight": lambda a, b, i: np.right_shift(a, b),
    "PRelu": lambda a, b, i: np.where(a < 0, a * b, a),
}


def _binary(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray]:
    x, y = a[0], a[1]
    fn = str(node.attr("fn"))
    if x.dtype == np.float16:
        x, y = x.astype(np.float32), (y.astype(np.float32) if y.dtype == np.float16 else y)
    with np.errstate(all="ignore"):
        out = np.asarray(_BINARY[fn](x, y, int(node.attr("i0", 0))))
    shape = np.broadcast_shapes(a[0].shape, a[1].shape)
    dtype = np.bool_ if out.dtype == np.bool_ else a[0].dtype
    with np.errstate(all="ignore"):
        return [np.broadcast_to(out, shape).astype(dtype)]


def _where(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray]:
    return [np.where(a[0], a[1], a[2])]


def _cast(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray]:
    to = ElemType(node.attr("to")).numpy
    if to == np.bool_:
        return [a[0] != 0]
    with np.errstate(all="ignore"):
        return [a[0].astype(to)]


def _reduce(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray] | None:
    x = a[0]
    fn = str(node.attr("fn"))
    axes = tuple(node.attr("axes") or range(x.ndim))
    keep = bool(node.attr("keepdims", 1))
    if fn == "ReduceSum":
        y = np.sum(x, axis=axes, keepdims=keep, dtype=_f32(x).dtype)
    elif fn == "ReduceProd":
        y = np.prod(x, axis=axes, keepdims=keep, dtype=_f32(x).dtype)
    elif fn in ("ReduceMax", "ReduceMin") and x.size:
        y = (np.max if fn == "ReduceMax" else np.min)(x, axis=axes, keepdims=keep)
    else:
        return None
    return [np.asarray(y).astype(x.dtype)]


def _arg_reduce(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray]:
    x = a[0]
    axis = int(node.attr("axis", 0))
    pick = np.argmax if node.attr("fn") == "ArgMax" else np.argmin
    if node.attr("select_last_index", 0):
        idx = x.shape[axis] - 1 - pick(np.flip(x, axis=axis), axis=axis)
    else:
        idx = pick(x, axis=axis)
    idx = np.expand_dims(idx, axis) if node.attr("keepdims", 1) else idx
    return [np.asarray(idx, dtype=np.int64)]


def _wrap(idx: np.ndarray, n: int) -> np.ndarray:
    idx = idx.astype(np.int64)
    return np.where(idx < 0, idx + n, idx)


def _gather(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray]:
    axis = int(node.attr("axis", 0))
    return [np.take(a[0], _wrap(a[1], a[0].shape[axis]), axis=axis)]


def _gather_elements(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray]:
    axis = int(node.attr("axis", 0))
    return [np.take_along_axis(a[0], _wrap(a[1], a[0].shape[axis]), axis=axis)]


def _gather_nd(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray]:
    data, idx, b = a[0], a[1], int(node.attr("batch_dims", 0))
    k = idx.shape[-1]
    batch = int(np.prod(data.shape[:b], dtype=np.int64))
    d = data.reshape((batch, *data.shape[b:]))
    i = idx.reshape((batch, -1, k)).astype(np.int64)
    i = np.where(i < 0, i + np.array(data.shape[b : b + k], np.int64), i)
    picked = d[(np.arange(batch).reshape(batch, 1), *(i[..., j] for j in range(k)))]
    return [picked.reshape((*idx.shape[:-1], *data.shape[b + k :]))]


_COMBINE = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}


def _scatter_nd(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray] | None:
    """The updates applied one after the other, in order, as ONNX's reference does (repeated
    places combine in order; with no reduction the last one wins). Declines indices out of
    range: the device kernel reports them."""
    data, idx, upd = a
    k = idx.shape[-1]
    n = int(np.prod(idx.shape[:-1], dtype=np.int64))
    dims = np.array(data.shape[:k], np.int64)
    places = idx.reshape(n, k).astype(np.int64)
    places = np.where(places < 0, places + dims, places)
    if places.size and ((places < 0).any() or (places >= dims).any()):
        return None
    rows = upd.reshape((n, *data.shape[k:]))
    combine = _COMBINE.get(str(node.attr("reduction", "none")))
    out = data.copy()
    for place, row in zip(places, rows, strict=True):
        at = tuple(int(v) for v in place)
        out[at] = row if combine is None else combine(out[at], row)
    return [out]


def _scatter_elements(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray] | None:
    """The updates applied one after the other, in row-major order of ``indices``, as ONNX's
    reference does. Declines indices out of range: the device kernel reports them."""
    data, idx, upd = a
    axis = int(node.attr("axis", 0))
    n = data.shape[axis]
    at = np.where(idx < 0, idx.astype(np.int64) + n, idx.astype(np.int64))
    if at.size and ((at < 0).any() or (at >= n).any()):
        return None
    combine = _COMBINE.get(str(node.attr("reduction", "none")))
    out = data.copy()
    for where in np.ndindex(*idx.shape):
        place = (*where[:axis], int(at[where]), *where[axis + 1 :])
        out[place] = upd[where] if combine is None else combine(out[place], upd[where])
    return [out]


def _max_unpool(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray] | None:
    """Zeros of the output shape with X written at the flat places I names; a place named
    twice takes the last X. Declines indices out of range: the device kernel reports them."""
    x, idx = a
    shape = unpool_shape(node, TensorType(ElemType.from_numpy(x.dtype), tuple(x.shape)))
    out = np.zeros(int(np.prod(shape, dtype=np.int64)), x.dtype)
    flat = idx.reshape(-1).astype(np.int64)
    if flat.size and (flat.min() < 0 or flat.max() >= out.size):
        return None
    _, first = np.unique(flat[::-1], return_index=True)  # the last occurrence of each place
    last = flat.size - 1 - first
    out[flat[last]] = x.reshape(-1)[last]
    return [out.reshape(shape)]


def _reverse_sequence(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray] | None:
    """The first sequence_lens[b] steps of batch b reversed. Declines a length outside [0, T]:
    the device kernel reports it."""
    x, lens = a[0], a[1].astype(np.int64)
    time_axis, batch_axis = int(node.attr("time_axis", 0)), int(node.attr("batch_axis", 1))
    steps = x.shape[time_axis]
    if lens.size and ((lens < 0).any() or (lens > steps).any()):
        return None
    out = x.copy()
    for b, n in enumerate(lens.tolist()):  # batch b's slice has the time axis first (views)
        row, src = np.moveaxis(out, batch_axis, 0)[b], np.moveaxis(x, batch_axis, 0)[b]
        row[:n] = src[:n][::-1]
    return [out]


def _slice(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray]:
    from stack.compiler.op_rules import clamp_slice

    x = a[0]
    spec = zip(x.shape, node.attr("starts"), node.attr("ends"), node.attr("steps"), strict=True)
    return [x[tuple(slice(*clamp_slice(n, s, e, st)) for n, s, e, st in spec)]]


def _expand(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray]:
    shape = np.broadcast_shapes(a[0].shape, tuple(node.attr("shape")))
    return [np.broadcast_to(a[0], shape).copy()]


def _tile(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray]:
    return [np.tile(a[0], tuple(node.attr("repeats")))]


def _cumsum(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray]:
    x, axis = a[0], int(node.attr("axis", 0))
    src = np.flip(x, axis=axis) if node.attr("reverse", 0) else x
    prod = node.attr("prod", 0)
    acc = (np.cumprod if prod else np.cumsum)(src, axis=axis, dtype=x.dtype)
    if node.attr("exclusive", 0):
        first = np.take(acc, [0], axis=axis)
        start = np.ones_like(first) if prod else np.zeros_like(first)
        acc = np.concatenate([start, acc], axis=axis)
        acc = np.take(acc, np.arange(x.shape[axis]), axis=axis)
    return [np.flip(acc, axis=axis) if node.attr("reverse", 0) else acc]


def _range(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray]:
    start, limit, delta = (np.asarray(v).reshape(()) for v in a)
    n = max(int(np.ceil((float(limit) - float(start)) / float(delta))), 0)
    return [(start + np.arange(n, dtype=start.dtype) * delta).astype(start.dtype)]


def _nonzero(node: Node, a: Sequence[np.ndarray]) -> list[np.ndarray]:
    return [np.array(np.nonzero(a[0]), dtype=np.int64).reshape(a[0].ndim, -1)]


for _op, _fn in (
    (OpType.UNARY, _unary),
    (OpType.BINARY, _binary),
    (OpType.WHERE, _where),
    (OpType.CAST, _cast),
    (OpType.BITCAST, _bitcast),
    (OpType.DET, _det),
    (OpType.REDUCE, _reduce),
    (OpType.ARG_REDUCE, _arg_reduce),
    (OpType.NEGATIVE_LOG_LIKELIHOOD_LOSS, negative_log_likelihood_loss.evaluate),
    (OpType.SOFTMAX_CROSS_ENTROPY_LOSS, softmax_cross_entropy_loss.evaluate),
    (OpType.GATHER, _gather),
    (OpType.GATHER_ELEMENTS, _gather_elements),
    (OpType.GATHER_ND, _gather_nd),
    (OpType.SCATTER_ND, _scatter_nd),
    (OpType.SCATTER_ELEMENTS, _scatter_elements),
    (OpType.REVERSE_SEQUENCE, _reverse_sequence),
    (OpType.TENSOR_SCATTER, tensor_scatter.evaluate),
    (OpType.MAXUNPOOL, _max_unpool),
    (OpType.SLICE, _slice),
    (OpType.EXPAND, _expand),
    (OpType.TILE, _tile),
    (OpType.CUMSUM, _cumsum),
    (OpType.RANGE, _range),
    (OpType.NONZERO, _nonzero),
):
    register(_op, _fn)
