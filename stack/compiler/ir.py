"""The compiler's typed IR: element types, op types, tensor types, nodes and graphs.

Records are frozen, slotted dataclasses; a pass never mutates a graph, it returns a new one
(:meth:`Graph.replace`). Values are named by strings (ONNX names survive import); an omitted
optional input is the empty string. Constants (initializers, folded values) live in
``Graph.constants`` as read-only NumPy arrays; ``Graph.types`` holds the static
:class:`TensorType` of every value once shape inference has run.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

import numpy as np

#: An attribute value: scalars, strings and flat tuples of numbers.
AttrValue = int | float | str | tuple[int, ...] | tuple[float, ...]


class ElemType(enum.StrEnum):
    """Element types the IR can carry (a superset of what the device runs)."""

    F32 = "float32"
    F16 = "float16"
    F64 = "float64"
    I8 = "int8"
    U8 = "uint8"
    I16 = "int16"
    U16 = "uint16"
    I32 = "int32"
    U32 = "uint32"
    I64 = "int64"
    U64 = "uint64"
    BOOL = "bool"

    @property
    def numpy(self) -> np.dtype:
        """The NumPy dtype."""
        return np.dtype(self.value)

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return self.numpy.itemsize

    @property
    def is_float(self) -> bool:
        return self in (ElemType.F32, ElemType.F16, ElemType.F64)

    @classmethod
    def from_numpy(cls, dtype: Any) -> ElemType:
        """The ElemType of a NumPy dtype; ValueError listing the known ones when none."""
        name = np.dtype(dtype).name
        try:
            return cls(name)
        except ValueError:
            known = ", ".join(e.value for e in cls)
            raise ValueError(f"no IR element type for {name}; known: {known}") from None


class OpType(enum.StrEnum):
    """The IR's op vocabulary (ONNX-like; fused forms carry a ``relu`` attribute)."""

    CONV = "Conv"
    CONV_TRANSPOSE = "ConvTranspose"  # strides, pads (may be < 0: zero extension), dilations, group
    COL2IM = "Col2Im"  # image_shape, block_shape (constants), dilations, pads, strides
    DEFORM_CONV = "DeformConv"  # strides, pads, dilations, group, offset_group (2-D)
    CAUSAL_CONV_WITH_STATE = "CausalConvWithState"  # activation: none, silu, swish
    RNN = "RNN"  # direction, layout, activations, activation_alpha/beta, clip
    GRU = "GRU"  # RNN's attributes (two activations per direction), linear_before_reset
    LSTM = "LSTM"  # RNN's attributes (three activations per direction), input_forget
    CONV_INTEGER = "ConvInteger"  # strides, pads, dilations, group (2-D); zero points as inputs
    QLINEARCONV = "QLinearConv"  # ConvInteger's attributes; scales, zero points and B as inputs
    GEMM = "Gemm"
    MATMUL = "MatMul"
    DET = "Det"  # X [*, M, M] -> [*]: the determinant of each trailing square matrix
    ADD = "Add"
    SUB = "Sub"
    MUL = "Mul"
    SWIGLU = "SwiGLU"  # alpha: Y = A * sigmoid(alpha * A) * B, A and B of one shape
    DIV = "Div"
    RELU = "Relu"
    BATCHNORM = "BatchNormalization"
    DROPOUT = "Dropout"
    IDENTITY = "Identity"
    MAXPOOL = "MaxPool"
    AVGPOOL = "AveragePool"
    GLOBALAVGPOOL = "GlobalAveragePool"
    GLOBALLPPOOL = "GlobalLpPool"  # p (the norm's order, >= 1)
    MAXROIPOOL = "MaxRoiPool"  # pooled_shape (two ints >= 1), spatial_scale
    ROIALIGN = "RoiAlign"  # output_height/width, sampling_ratio, spatial_scale, mode, coord. mode
    GRID_SAMPLE = "GridSample"  # mode (linear, nearest, cubic), padding_mode, align_corners
    AFFINE_GRID = "AffineGrid"  # size (N, C, *S: the constant ONNX input), align_corners
    MAXUNPOOL = "MaxUnpool"  # kernel_shape, strides, pads (begins then ends); output_shape if set
    FLATTEN = "Flatten"
    RESHAPE = "Reshape"
    CONCAT = "Concat"
    SOFTMAX = "Softmax"
    LAYERNORM = "LayerNormalization"
    QUANTIZE = "QuantizeLinear"
    DEQUANTIZE = "DequantizeLinear"
    DYNAMIC_QUANTIZE_LINEAR = "DynamicQuantizeLinear"  # x F32 -> y U8, y_scale F32, y_zero_point U8
    QLINEARMATMUL = "QLinearMatMul"
    MATMUL_INTEGER = "MatMulInteger"
    CONSTANT_OF_SHAPE = "ConstantOfShape"
    SUM = "Sum"
    TRANSPOSE = "Transpose"
    COPY = "Copy"
    UNARY = "Unary"  # fn: the ONNX op name (Exp, Sqrt, ...); alpha, beta, i0, i1
    BINARY = "Binary"  # fn: the ONNX op name (Pow, Mod, Less, ...); i0
    WHERE = "Where"
    CAST = "Cast"  # to: the element type
    BITCAST = "BitCast"  # to: the element type the bits are read as (of the same width)
    REDUCE = "Reduce"  # fn: ReduceSum, ...; axes (non-negative), keepdims
    ARG_REDUCE = "ArgReduce"  # fn: ArgMax / ArgMin; axis, keepdims, select_last_index
    NEGATIVE_LOG_LIKELIHOOD_LOSS = "NegativeLogLikelihoodLoss"  # reduction; ignore_index if set
    SOFTMAX_CROSS_ENTROPY_LOSS = "SoftmaxCrossEntropyLoss"  # reduction; ignore_index if set
    ROTARY_EMBEDDING = "RotaryEmbedding"  # interleaved, num_heads, rotary_embedding_dim
    EINSUM = "Einsum"  # equation (ONNX's string)
    CUMSUM = "CumSum"
    DFT = "DFT"  # axis (non-negative), inverse, onesided, dft_length (the constant ONNX inputs)
    STFT = "STFT"  # frame_step, frame_length (the constant ONNX inputs), onesided
    ATTENTION = "Attention"  # is_causal, q/kv_num_heads, qk_matmul_output_mode, ..., scale, softcap
    LINEAR_ATTENTION = "LinearAttention"  # update_rule, q_num_heads, kv_num_heads, scale
    TOPK = "TopK"
    GATHER = "Gather"
    GATHER_ELEMENTS = "GatherElements"
    GATHER_ND = "GatherND"  # batch_dims
    SCATTER_ND = "ScatterND"  # reduction: none, add, mul, max, min
    SCATTER_ELEMENTS = "ScatterElements"  # axis; reduction: none, add, mul, max, min
    REVERSE_SEQUENCE = "ReverseSequence"  # time_axis, batch_axis: 0 and 1, either way round
    TENSOR_SCATTER = "TensorScatter"  # axis: non-negative, not 0; mode: linear, circular
    SLICE = "Slice"  # starts, ends, steps: one per axis, clamped
    PAD = "Pad"  # mode, pads (begins then ends), value
    CENTER_CROP_PAD = "CenterCropPad"  # shape: the target per axis (the constant ONNX input)
    EXPAND = "Expand"  # shape: the output shape
    TILE = "Tile"
    RANGE = "Range"  # folded only: its length depends on its input values
    NONZERO = "NonZero"  # folded only: its length depends on its input values


#: Ops that only reinterpret their first input (no data movement when the planner can alias).
VIEW_OPS = frozenset({OpType.RESHAPE, OpType.FLATTEN, OpType.IDENTITY, OpType.DROPOUT})


@dataclass(frozen=True, slots=True)
class TensorType:
    """A static tensor type: element type and shape (``()`` for a scalar)."""

    dtype: ElemType
    shape: tuple[int, ...]

    @property
    def numel(self) -> int:
        return math.prod(self.shape)

    @property
    def nbytes(self) -> int:
        return self.numel * self.dtype.itemsize

    def __str__(self) -> str:
        return f"{self.dtype.value}[{', '.join(str(d) for d in self.shape)}]"


def _norm_attr(value: Any) -> AttrValue:
    if isinstance(value, bool | np.bool_):
        return int(value)
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, float | np.floating):
        return float(value)
    if isinstance(value, str):
        return value
    if isinstance(value, list | tuple | np.ndarray):
        items = list(np.asarray(value).ravel().tolist()) if isinstance(value, np.ndarray) else value
        if all(isinstance(v, int | bool | np.integer) for v in items):
            return tuple(int(v) for v in items)
        return tuple(float(v) for v in items)
    raise TypeError(f"attribute value {value!r} is not a number, string or tuple of numbers")


def make_attrs(attrs: Mapping[str, Any]) -> tuple[tuple[str, AttrValue], ...]:
    """Name-sorted, normalised attribute pairs (lists become tuples, bools ints)."""
    return tuple(sorted((k, _norm_attr(v)) for k, v in attrs.items() if v is not None))


@dataclass(frozen=True, slots=True)
class Node:
    """One op application. ``inputs``/``outputs`` name values; ``""`` is an omitted input."""

    name: str
    op: OpType
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    attrs: tuple[tuple[str, AttrValue], ...] = ()

    @classmethod
    def make(
        cls, name: str, op: OpType, inputs: Iterable[str], outputs: Iterable[str], **attrs: Any
    ) -> Node:
        """Build a node with normalised attributes."""
        return cls(name, op, tuple(inputs), tuple(outputs), make_attrs(attrs))

    def attr(self, key: str, default: Any = None) -> Any:
        """The attribute ``key``, or ``default`` when absent."""
        for name, value in self.attrs:
            if name == key:
                return value
        return default

    def with_attrs(self, **changes: Any) -> Node:
        """A copy with attributes added or replaced (a value of None removes one)."""
        merged: dict[str, Any] = dict(self.attrs)
        for key, value in changes.items():
            if value is None:
                merged.pop(key, None)
            else:
                merged[key] = value
        return replace(self, attrs=make_attrs(merged))

    def input(self, i: int) -> str:
        """The ``i``-th input name, ``""`` when omitted or absent."""
        return self.inputs[i] if i < len(self.inputs) else ""


def _frozen(mapping: Mapping[str, Any] | None) -> Mapping[str, Any]:
    return MappingProxyType(dict(mapping or {}))


def freeze_array(array: np.ndarray) -> np.ndarray:
    """A read-only contiguous copy (constants are shared between graphs, never mutated)."""
    out = np.array(array, copy=True, order="C")
    out.flags.writeable = False
    return out


@dataclass(frozen=True, slots=True, eq=False)
class Graph:
    """A whole model: nodes in topological order, named inputs/outputs, types and constants."""

    name: str
    nodes: tuple[Node, ...]
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    types: Mapping[str, TensorType] = field(default_factory=lambda: _frozen(None))
    constants: Mapping[str, np.ndarray] = field(default_factory=lambda: _frozen(None))

    def __post_init__(self) -> None:
        object.__setattr__(self, "types", _frozen(self.types))
        object.__setattr__(self, "constants", _frozen(self.constants))

    def replace(self, **changes: Any) -> Graph:
        """A new graph with some fields replaced (the pass-writing primitive)."""
        return replace(self, **changes)

    def type_of(self, value: str) -> TensorType | None:
        """The static type of ``value`` (constants are typed by their array)."""
        if value in self.types:
            return self.types[value]
        if value in self.constants:
            arr = self.constants[value]
            return TensorType(ElemType.from_numpy(arr.dtype), tuple(arr.shape))
        return None

    def producers(self) -> dict[str, Node]:
        """Map value name -> the node that writes it."""
        return {out: node for node in self.nodes for out in node.outputs if out}

    def consumers(self) -> dict[str, list[Node]]:
        """Map value name -> nodes that read it (in node order)."""
        users: dict[str, list[Node]] = {}
        for node in self.nodes:
            for name in node.inputs:
                if name:
                    users.setdefault(name, []).append(node)
        return users

    def op_counts(self) -> dict[str, int]:
        """How many nodes of each op type the graph holds."""
        counts: dict[str, int] = {}
        for node in self.nodes:
            counts[node.op.value] = counts.get(node.op.value, 0) + 1
        return counts
