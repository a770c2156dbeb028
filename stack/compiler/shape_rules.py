"""Shape and dtype rules: one function per op type, in a registry with explicit ``register()``.

A rule takes the node, the input types (``None`` for an omitted optional input) and the graph's
constants (for shape-carrying inputs such as Reshape's ``shape``) and returns the output types.
Rules raise :class:`ShapeInferenceError` naming the node when inputs do not fit.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import numpy as np

from stack.compiler.errors import IRError, ShapeInferenceError
from stack.compiler.ir import ElemType, Node, OpType, TensorType

Rule = Callable[[Node, Sequence[TensorType | None], Mapping[str, np.ndarray]], list[TensorType]]
_RULES: dict[OpType, Rule] = {}


def register(op: OpType) -> Callable[[Rule], Rule]:
    """Register the shape rule of ``op`` (decorator)."""

    def deco(fn: Rule) -> Rule:
        _RULES[op] = fn
        return fn

    return deco


def rule_for(op: OpType) -> Rule:
    """The rule of ``op``; IRError listing the known ops when there is none."""
    try:
        return _RULES[op]
    except KeyError:
        known = ", ".join(sorted(o.value for o in _RULES))
        raise IRError(f"no shape rule for {op.value}; known: {known}", op=op.value) from None


def _fail(node: Node, message: str) -> ShapeInferenceError:
    return ShapeInferenceError(message, op=node.op.value, node=node.name)


def _need(node: Node, types: Sequence[TensorType | None], i: int) -> TensorType:
    t = types[i] if i < len(types) else None
    if t is None:
        raise _fail(node, f"input {i} is required")
    return t


def norm_axis(node: Node, axis: int, rank: int, what: str = "axis") -> int:
    """``axis`` in ``[-rank, rank)`` made non-negative; a ShapeInferenceError naming the node
    when it is out of range (a 0-d tensor has no axis at all)."""
    if not -rank <= axis < rank:
        raise _fail(node, f"{what} {axis} is out of range for a rank-{rank} tensor")
    return axis + rank if axis < 0 else axis


def broadcast(node: Node, *shapes: tuple[int, ...]) -> tuple[int, ...]:
    """NumPy broadcasting of ``shapes``; a ShapeInferenceError naming both when they clash."""
    try:
        return tuple(np.broadcast_shapes(*shapes))
    except ValueError:
        raise _fail(node, f"shapes {list(shapes)} do not broadcast") from None


def conv_out(size: int, k: int, stride: int, pad0: int, pad1: int, dil: int, ceil: int) -> int:
    """Spatial output size of a conv/pool window."""
    span = dil * (k - 1) + 1
    num = size + pad0 + pad1 - span
    out = (-(-num // stride) if ceil else num // stride) + 1
    if ceil and (out - 1) * stride >= size + pad0:
        out -= 1  # the last window must start inside the input or the begin padding
    return out


@register(OpType.GEMM)
def _gemm(node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]) -> list:
    a, b = _need(node, t, 0), _need(node, t, 1)
    if len(a.shape) != 2 or len(b.shape) != 2:
        raise _fail(node, f"Gemm needs 2-D A and B, got {a} and {b}")
    m, k = a.shape[::-1] if node.attr("trans_a", 0) else a.shape
    k2, n = b.shape[::-1] if node.attr("trans_b", 0) else b.shape
    if k != k2:
        raise _fail(node, f"Gemm inner dims differ: A {a} vs B {b}")
    if len(t) > 2 and t[2] is not None:
        broadcast(node, t[2].shape, (m, n))
    return [TensorType(a.dtype, (m, n))]


def matmul_shape(node: Node, a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...]:
    """numpy.matmul's result shape (1-D operands promoted and squeezed back)."""
    if not a or not b:
        raise _fail(node, "MatMul operands must be at least 1-D")
    a2 = (1, *a) if len(a) == 1 else a
    b2 = (*b, 1) if len(b) == 1 else b
    if a2[-1] != b2[-2]:
        raise _fail(node, f"MatMul inner dims differ: {a} x {b}")
    out = (*broadcast(node, a2[:-2], b2[:-2]), a2[-2], b2[-1])
    if len(a) == 1:
        out = out[:-2] + out[-1:]
    if len(b) == 1:
        out = out[:-1]
    return out


@register(OpType.MATMUL)
def _matmul(node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]) -> list:
    a, b = _need(node, t, 0), _need(node, t, 1)
    return [TensorType(a.dtype, matmul_shape(node, a.shape, b.shape))]


@register(OpType.MATMUL_INTEGER)
def _matmul_int(node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]) -> list:
    a, b = _need(node, t, 0), _need(node, t, 1)
    return [TensorType(ElemType.I32, matmul_shape(node, a.shape, b.shape))]


@register(OpType.QLINEARMATMUL)
def _qlmm(node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]) -> list:
    a, b, yz = _need(node, t, 0), _need(node, t, 3), _need(node, t, 7)
    return [TensorType(yz.dtype, matmul_shape(node, a.shape, b.shape))]


def _elementwise(node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]) -> list:
    present = [x for x in t if x is not None]
    if not present:
        raise _fail(node, "needs at least one input")
    dtypes = {x.dtype for x in present}
    if len(dtypes) > 1:
        raise _fail(node, f"inputs mix element types {sorted(d.value for d in dtypes)}")
    return [TensorType(present[0].dtype, broadcast(node, *(x.shape for x in present)))]


for _op in (OpType.ADD, OpType.SUB, OpType.MUL, OpType.DIV, OpType.SUM):
    register(_op)(_elementwise)


def _same_as_first(node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]) -> list:
    return [_need(node, t, 0)]


for _op in (OpType.RELU, OpType.BATCHNORM, OpType.SOFTMAX, OpType.IDENTITY, OpType.COPY):
    register(_op)(_same_as_first)


@register(OpType.LAYERNORM)
def _layernorm(node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]) -> list:
    x = _need(node, t, 0)
    axis = norm_axis(node, int(node.attr("axis", -1)), len(x.shape))
    stats = TensorType(ElemType.F32, (*x.shape[:axis], *(1 for _ in x.shape[axis:])))
    return [x, stats, stats][: len(node.outputs)]


@register(OpType.DROPOUT)
def _dropout(node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]) -> list:
    x = _need(node, t, 0)
    return [x, TensorType(ElemType.BOOL, x.shape)][: len(node.outputs)]


@register(OpType.FLATTEN)
def _flatten(node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]) -> list:
    x = _need(node, t, 0)
    rank, axis = len(x.shape), int(node.attr("axis", 1))
    if not -rank <= axis <= rank:  # Flatten's axis may equal the rank
        raise _fail(node, f"axis {axis} is out of range for a rank-{rank} tensor")
    axis = axis + rank if axis < 0 else axis
    lead = int(np.prod(x.shape[:axis], dtype=np.int64))
    return [TensorType(x.dtype, (lead, int(np.prod(x.shape[axis:], dtype=np.int64))))]


def reshape_target(node: Node, src: tuple[int, ...], spec: Sequence[int]) -> tuple[int, ...]:
    """Resolve ONNX Reshape's ``0`` (copy, unless allowzero) and ``-1`` (infer) entries."""
    allowzero = int(node.attr("allowzero", 0))
    dims = [
        src[i] if d == 0 and not allowzero and i < len(src) else int(d) for i, d in enumerate(spec)
    ]
    total = int(np.prod(src, dtype=np.int64))
    if dims.count(-1) > 1:
        raise _fail(node, f"shape {list(spec)} has more than one -1")
    if -1 in dims:
        known = int(np.prod([d for d in dims if d != -1], dtype=np.int64))
        dims[dims.index(-1)] = total // known if known else 0
    if int(np.prod(dims, dtype=np.int64)) != total:
        raise _fail(node, f"cannot reshape {src} ({total} elements) to {list(spec)}")
    return tuple(dims)


@register(OpType.RESHAPE)
def _reshape(node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]) -> list:
    x = _need(node, t, 0)
    spec = node.attr("shape")
    if spec is not None:  # resolved by constant folding: taken literally
        if int(np.prod(spec, dtype=np.int64)) != x.numel:
            raise _fail(node, f"cannot view {x} as {tuple(spec)}")
        return [TensorType(x.dtype, tuple(spec))]
    if spec is None:
        if node.input(1) not in c:
            raise _fail(node, f"Reshape's shape {node.input(1)!r} is not a constant")
        spec = tuple(int(v) for v in np.asarray(c[node.input(1)]).ravel())
    return [TensorType(x.dtype, reshape_target(node, x.shape, spec))]


@register(OpType.CONCAT)
def _concat(node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]) -> list:
    parts = [_need(node, t, i) for i in range(len(t))]
    rank = len(parts[0].shape)
    axis = norm_axis(node, int(node.attr("axis")), rank)
    for p in parts[1:]:
        if len(p.shape) != rank or any(
            p.shape[i] != parts[0].shape[i] for i in range(rank) if i != axis
        ):
            raise _fail(node, f"Concat parts {[str(q) for q in parts]} differ off axis {axis}")
    shape = list(parts[0].shape)
    shape[axis] = sum(p.shape[axis] for p in parts)
    return [TensorType(parts[0].dtype, tuple(shape))]


@register(OpType.TRANSPOSE)
def _transpose(node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]) -> list:
    x = _need(node, t, 0)
    perm = node.attr("perm") or tuple(reversed(range(len(x.shape))))
    if sorted(perm) != list(range(len(x.shape))):
        raise _fail(node, f"perm {perm} does not permute {len(x.shape)} axes")
    return [TensorType(x.dtype, tuple(x.shape[p] for p in perm))]


@register(OpType.QUANTIZE)
def _quantize(node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]) -> list:
    x = _need(node, t, 0)
    zp = t[2] if len(t) > 2 else None
    dtype = zp.dtype if zp is not None else ElemType(node.attr("output_dtype", "uint8"))
    return [TensorType(dtype, x.shape)]


@register(OpType.DEQUANTIZE)
def _dequantize(node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]) -> list:
    x, scale = _need(node, t, 0), _need(node, t, 1)
    return [TensorType(scale.dtype, x.shape)]


@register(OpType.DYNAMIC_QUANTIZE_LINEAR)
def _dynamic_quantize(
    node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]
) -> list:
    """A float32 x gives y (uint8, x's shape) and the scalars y_scale (float32) and
    y_zero_point (uint8)."""
    x = _need(node, t, 0)
    if x.dtype is not ElemType.F32:
        raise _fail(node, f"DynamicQuantizeLinear takes a float32 x, got {x}")
    return [
        TensorType(ElemType.U8, x.shape),
        TensorType(ElemType.F32, ()),
        TensorType(ElemType.U8, ()),
    ]


@register(OpType.CONSTANT_OF_SHAPE)
def _const_of_shape(
    node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]
) -> list:
    if node.input(0) not in c:
        raise _fail(node, f"ConstantOfShape's shape {node.input(0)!r} is not a constant")
    shape = tuple(int(v) for v in np.asarray(c[node.input(0)]).ravel())
    return [TensorType(ElemType(node.attr("dtype", "float32")), shape)]


from stack.compiler import (  # noqa: E402,F401  (the rest)
    attention,
    bitcast,
    causal_conv_with_state,
    center_crop_pad,
    conv_integer,
    det,
    dft,
    einsum,
    gru,
    linear_attention,
    lstm,
    negative_log_likelihood_loss,
    op_rules,
    rnn,
    rotary_embedding,
    softmax_cross_entropy_loss,
    spatial_rules,
    stft,
    swiglu,
    tensor_scatter,
)
