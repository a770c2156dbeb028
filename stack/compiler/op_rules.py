"""Shape and dtype rules of the point-wise, reduction and indexing ops (registered into
:mod:`stack.compiler.shape_rules`' registry on import).

Attributes are in their resolved IR form (see :class:`~stack.compiler.ir.OpType`): axes are
non-negative, Slice bounds clamped, Expand's ``shape`` the output shape. Every rule raises a
:class:`ShapeInferenceError` naming the node for a bad rank, axis or dtype mix.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from stack.compiler.ir import ElemType, Node, OpType, TensorType
from stack.compiler.shape_rules import _fail, _need, broadcast, norm_axis, register

Types = Sequence[TensorType | None]
Consts = Mapping[str, np.ndarray]

#: UNARY functions whose result is BOOL; BINARY functions whose result is BOOL.
UNARY_PREDICATES = frozenset({"IsNaN", "IsInf"})
BINARY_PREDICATES = frozenset(
    {"Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "And", "Or", "Xor"}
)
LOGIC = frozenset({"And", "Or", "Xor", "Not"})
INTEGER_UNARY = frozenset({"Neg", "Abs", "Sign", "BitwiseNot", "Clip"})
INTEGER_ONLY = frozenset(
    {"BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitShiftLeft", "BitShiftRight", "BitwiseNot"}
)


def _check_dtype(node: Node, dtype: ElemType, fn: str) -> None:
    if fn in LOGIC:
        ok = dtype is ElemType.BOOL
    elif fn in INTEGER_ONLY:
        ok = not dtype.is_float and dtype is not ElemType.BOOL
    elif fn in INTEGER_UNARY or node.op is OpType.BINARY:
        ok = dtype is not ElemType.BOOL
    else:
        ok = dtype.is_float
    if not ok:
        raise _fail(node, f"{fn} does not take {dtype.value}")


@register(OpType.UNARY)
def _unary(node: Node, t: Types, c: Consts) -> list:
    x = _need(node, t, 0)
    fn = str(node.attr("fn"))
    _check_dtype(node, x.dtype, fn)
    return [TensorType(ElemType.BOOL if fn in UNARY_PREDICATES else x.dtype, x.shape)]


@register(OpType.BINARY)
def _binary(node: Node, t: Types, c: Consts) -> list:
    a, b = _need(node, t, 0), _need(node, t, 1)
    fn = str(node.attr("fn"))
    _check_dtype(node, a.dtype, fn)
    if fn == "Pow":
        if b.dtype is ElemType.BOOL:
            raise _fail(node, "Pow's exponent cannot be bool")
    elif a.dtype != b.dtype:
        raise _fail(node, f"{fn} mixes {a.dtype.value} and {b.dtype.value}")
    shape = broadcast(node, a.shape, b.shape)
    return [TensorType(ElemType.BOOL if fn in BINARY_PREDICATES else a.dtype, shape)]


@register(OpType.WHERE)
def _where(node: Node, t: Types, c: Consts) -> list:
    cond, x, y = _need(node, t, 0), _need(node, t, 1), _need(node, t, 2)
    if cond.dtype is not ElemType.BOOL:
        raise _fail(node, f"Where's condition is {cond.dtype.value}, not bool")
    if x.dtype != y.dtype:
        raise _fail(node, f"Where mixes {x.dtype.value} and {y.dtype.value}")
    return [TensorType(x.dtype, broadcast(node, cond.shape, x.shape, y.shape))]


@register(OpType.CAST)
def _cast(node: Node, t: Types, c: Consts) -> list:
    return [TensorType(ElemType(node.attr("to")), _need(node, t, 0).shape)]


def _axes(node: Node, rank: int) -> tuple[int, ...]:
    axes = node.attr("axes")
    if axes is None:
        return tuple(range(rank))
    out = tuple(norm_axis(node, int(a), rank, "axes entry") for a in axes)
    if len(set(out)) != len(out):
        raise _fail(node, f"axes {tuple(axes)} repeat an axis")
    return out


@register(OpType.REDUCE)
def _reduce(node: Node, t: Types, c: Consts) -> list:
    x = _need(node, t, 0)
    if x.dtype is ElemType.BOOL and node.attr("fn") not in ("ReduceMax", "ReduceMin"):
        raise _fail(node, f"{node.attr('fn')} does not take bool")
    axes, keep = _axes(node, len(x.shape)), int(node.attr("keepdims", 1))
    shape = tuple(1 if i in axes else d for i, d in enumerate(x.shape) if keep or i not in axes)
    return [TensorType(x.dtype, shape)]


@register(OpType.ARG_REDUCE)
def _arg_reduce(node: Node, t: Types, c: Consts) -> list:
    x = _need(node, t, 0)
    axis = norm_axis(node, int(node.attr("axis", 0)), len(x.shape))
    if x.shape[axis] == 0:
        raise _fail(node, f"{node.attr('fn')} over an empty axis {axis}")
    keep = int(node.attr("keepdims", 1))
    shape = tuple(1 if i == axis else d for i, d in enumerate(x.shape) if keep or i != axis)
    return [TensorType(ElemType.I64, shape)]


@register(OpType.CUMSUM)
def _cumsum(node: Node, t: Types, c: Consts) -> list:
    x = _need(node, t, 0)
    norm_axis(node, int(node.attr("axis", 0)), len(x.shape))
    return [x]


@register(OpType.TOPK)
def _topk(node: Node, t: Types, c: Consts) -> list:
    x = _need(node, t, 0)
    axis = norm_axis(node, int(node.attr("axis", -1)), len(x.shape))
    k = int(node.attr("k"))
    if not 0 <= k <= x.shape[axis]:
        raise _fail(node, f"k = {k} is outside [0, {x.shape[axis]}] on axis {axis}")
    shape = (*x.shape[:axis], k, *x.shape[axis + 1 :])
    return [TensorType(x.dtype, shape), TensorType(ElemType.I64, shape)]


def _indices(node: Node, idx: TensorType) -> None:
    if idx.dtype not in (ElemType.I32, ElemType.I64):
        raise _fail(node, f"indices are {idx.dtype.value}, not int32 / int64")


@register(OpType.GATHER)
def _gather(node: Node, t: Types, c: Consts) -> list:
    x, idx = _need(node, t, 0), _need(node, t, 1)
    _indices(node, idx)
    axis = norm_axis(node, int(node.attr("axis", 0)), len(x.shape))
    return [TensorType(x.dtype, (*x.shape[:axis], *idx.shape, *x.shape[axis + 1 :]))]


@register(OpType.GATHER_ELEMENTS)
def _gather_elements(node: Node, t: Types, c: Consts) -> list:
    x, idx = _need(node, t, 0), _need(node, t, 1)
    _indices(node, idx)
    norm_axis(node, int(node.attr("axis", 0)), len(x.shape))
    if len(idx.shape) != len(x.shape):
        raise _fail(node, f"indices {idx} must have the rank of data {x}")
    return [TensorType(x.dtype, idx.shape)]


@register(OpType.GATHER_ND)
def _gather_nd(node: Node, t: Types, c: Consts) -> list:
    x, idx = _need(node, t, 0), _need(node, t, 1)
    _indices(node, idx)
    b = int(node.attr("batch_dims", 0))
    if not idx.shape or b < 0 or b >= len(idx.shape) or b + idx.shape[-1] > len(x.shape):
        raise _fail(node, f"indices {idx} do not address data {x} with batch_dims {b}")
    if x.shape[:b] != idx.shape[:b]:
        raise _fail(node, f"batch dims of {x} and {idx} differ")
    return [TensorType(x.dtype, (*idx.shape[:-1], *x.shape[b + idx.shape[-1] :]))]


#: ScatterND's and ScatterElements' ``reduction`` values (how an update meets the value it
#: lands on), in the order ONNX added them: none (opset 11), add and mul (16), max and min (18).
SCATTER_REDUCTIONS = ("none", "add", "mul", "max", "min")


def _reduction(node: Node) -> None:
    """A scatter node's ``reduction`` must be one of :data:`SCATTER_REDUCTIONS`."""
    reduction = node.attr("reduction", "none")
    if reduction not in SCATTER_REDUCTIONS:
        raise _fail(
            node, f"unknown reduction {reduction!r}; known: {', '.join(SCATTER_REDUCTIONS)}"
        )


@register(OpType.SCATTER_ND)
def _scatter_nd(node: Node, t: Types, c: Consts) -> list:
    x, idx, upd = _need(node, t, 0), _need(node, t, 1), _need(node, t, 2)
    _indices(node, idx)
    if not idx.shape or idx.shape[-1] > len(x.shape):
        raise _fail(node, f"indices {idx} do not address data {x}")
    want = (*idx.shape[:-1], *x.shape[idx.shape[-1] :])
    if upd.shape != want or upd.dtype != x.dtype:
        raise _fail(node, f"updates {upd} must be {x.dtype.value}{list(want)} for data {x}")
    _reduction(node)
    return [x]


@register(OpType.SCATTER_ELEMENTS)
def _scatter_elements(node: Node, t: Types, c: Consts) -> list:
    x, idx, upd = _need(node, t, 0), _need(node, t, 1), _need(node, t, 2)
    _indices(node, idx)
    axis = norm_axis(node, int(node.attr("axis", 0)), len(x.shape))
    if len(idx.shape) != len(x.shape) or any(
        i > n for d, (i, n) in enumerate(zip(idx.shape, x.shape, strict=True)) if d != axis
    ):
        raise _fail(node, f"indices {idx} must have the rank of data {x}, no axis longer")
    if upd.shape != idx.shape or upd.dtype != x.dtype:
        raise _fail(node, f"updates {upd} must be {x.dtype.value}{list(idx.shape)} for data {x}")
    _reduction(node)
    return [x]


@register(OpType.REVERSE_SEQUENCE)
def _reverse_sequence(node: Node, t: Types, c: Consts) -> list:
    x, lens = _need(node, t, 0), _need(node, t, 1)
    time_axis, batch_axis = int(node.attr("time_axis", 0)), int(node.attr("batch_axis", 1))
    if {time_axis, batch_axis} != {0, 1} or len(x.shape) < 2:
        raise _fail(node, f"time_axis {time_axis} and batch_axis {batch_axis} must be 0 and 1 "
                    f"of an input of rank >= 2, got {x}")  # fmt: skip
    if lens.dtype is not ElemType.I64 or lens.shape != (x.shape[batch_axis],):
        raise _fail(node, f"sequence_lens {lens} must be int64[{x.shape[batch_axis]}]")
    return [x]


def clamp_slice(n: int, start: int, end: int, step: int) -> tuple[int, int, int]:
    """ONNX Slice bounds on an axis of ``n`` as a Python slice triple (stop ``-n-1``: "past 0")."""
    start = start + n if start < 0 else start
    end = end + n if end < 0 else end
    if step > 0:
        return min(max(start, 0), n), min(max(end, 0), n), step
    start, end = min(max(start, -1), n - 1), min(max(end, -1), n - 1)
    return start, -n - 1 if end < 0 else end, step


@register(OpType.SLICE)
def _slice(node: Node, t: Types, c: Consts) -> list:
    x = _need(node, t, 0)
    starts, ends, steps = (tuple(node.attr(k)) for k in ("starts", "ends", "steps"))
    if not len(starts) == len(ends) == len(steps) == len(x.shape):
        raise _fail(node, f"Slice bounds must cover the {len(x.shape)} axes of {x}")
    if 0 in steps:
        raise _fail(node, "a Slice step is 0")
    shape = tuple(
        len(range(n)[slice(*clamp_slice(n, s, e, st))])
        for n, s, e, st in zip(x.shape, starts, ends, steps, strict=True)
    )
    return [TensorType(x.dtype, shape)]


@register(OpType.PAD)
def _pad(node: Node, t: Types, c: Consts) -> list:
    x = _need(node, t, 0)
    pads, n = tuple(node.attr("pads")), len(x.shape)
    if len(pads) != 2 * n:
        raise _fail(node, f"Pad needs {2 * n} pads for {x}, got {len(pads)}")
    shape = tuple(d + pads[i] + pads[n + i] for i, d in enumerate(x.shape))
    if min(shape, default=0) < 0:
        raise _fail(node, f"pads {pads} crop {x} below zero size")
    mode = node.attr("mode", "constant")
    if mode not in ("constant", "reflect", "edge", "wrap"):
        raise _fail(node, f"unknown Pad mode {mode!r}")
    if mode != "constant" and any(d == 0 for d in x.shape) and any(pads):
        raise _fail(node, f"{mode} padding of an empty axis")
    return [TensorType(x.dtype, shape)]


@register(OpType.EXPAND)
def _expand(node: Node, t: Types, c: Consts) -> list:
    x = _need(node, t, 0)
    return [TensorType(x.dtype, broadcast(node, x.shape, tuple(node.attr("shape"))))]


@register(OpType.TILE)
def _tile(node: Node, t: Types, c: Consts) -> list:
    x = _need(node, t, 0)
    reps = tuple(node.attr("repeats"))
    if len(reps) != len(x.shape) or min(reps, default=0) < 0:
        raise _fail(node, f"Tile repeats {reps} do not fit {x}")
    return [TensorType(x.dtype, tuple(d * r for d, r in zip(x.shape, reps, strict=True)))]


def _folded_only(node: Node, t: Types, c: Consts) -> list:
    missing = [v for v in node.inputs if v and v not in c]
    if missing:
        raise _fail(
            node,
            f"{node.op.value}'s output shape depends on the values of {missing[0]!r}, "
            "which are only known at run time (shapes are static)",
        )
    from stack.compiler.evaluate import evaluator_for

    fn = evaluator_for(node.op)
    assert fn is not None
    out = fn(node, [c[v] for v in node.inputs if v])
    return [TensorType(ElemType.from_numpy(a.dtype), tuple(a.shape)) for a in out or []]


register(OpType.RANGE)(_folded_only)
register(OpType.NONZERO)(_folded_only)
