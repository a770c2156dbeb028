"""IR op -> Executable op: the table that maps each kernel-backed IR op onto an ``ExecOp``.

Each entry names the ExecOp and the IR attributes it forwards (IR-only attributes such as
``layout`` or a resolved Reshape ``shape`` stay behind). View ops (Reshape, Flatten, Identity)
are not here: the emitter turns them into aliases or COPY ops.
"""

from __future__ import annotations

from dataclasses import dataclass

from stack.compiler.errors import EmitError
from stack.compiler.ir import AttrValue, Node, OpType
from stack.runtime import ExecOp


@dataclass(frozen=True, slots=True)
class Lowering:
    """How one IR op becomes an ExecOp: which op, which attributes cross over."""

    op: ExecOp
    attrs: tuple[str, ...] = ()


_TABLE: dict[OpType, Lowering] = {}


def register(ir_op: OpType, lowering: Lowering) -> None:
    """Declare the ExecOp an IR op lowers to."""
    _TABLE[ir_op] = lowering


def lower_node(node: Node) -> tuple[ExecOp, tuple[tuple[str, AttrValue], ...]]:
    """The ExecOp and the name-sorted attributes for ``node``; EmitError when it has none."""
    entry = _TABLE.get(node.op)
    if entry is None:
        known = ", ".join(sorted(op.value for op in _TABLE))
        raise EmitError(
            f"IR op {node.op.value} has no Executable lowering; lowered ops: {known}",
            op=node.op.value,
            node=node.name,
        )
    attrs = tuple(sorted((k, v) for k, v in node.attrs if k in entry.attrs))
    return entry.op, attrs


_WINDOW = ("kernel_shape", "strides", "pads", "dilations", "ceil_mode")
_CONV = ("strides", "pads", "dilations", "group", "relu", "algorithm")
_FUSED_POOL = ("pool_kernel", "pool_strides", "pool_pads", "pool_ceil")
register(OpType.CONV, Lowering(ExecOp.CONV2D, (*_CONV, *_FUSED_POOL)))
register(
    OpType.CONV_TRANSPOSE,
    Lowering(ExecOp.CONV_TRANSPOSE, ("strides", "pads", "dilations", "group")),
)
register(
    OpType.COL2IM,
    Lowering(ExecOp.COL2IM, ("image_shape", "block_shape", "dilations", "pads", "strides")),
)
register(
    OpType.DEFORM_CONV,
    Lowering(ExecOp.DEFORM_CONV, ("strides", "pads", "dilations", "group", "offset_group")),
)
register(OpType.CAUSAL_CONV_WITH_STATE, Lowering(ExecOp.CAUSAL_CONV_WITH_STATE, ("activation",)))
_RNN = ("direction", "layout", "activations", "activation_alpha", "activation_beta", "clip")
register(OpType.RNN, Lowering(ExecOp.RNN, _RNN))
register(OpType.GRU, Lowering(ExecOp.GRU, (*_RNN, "linear_before_reset")))
register(OpType.LSTM, Lowering(ExecOp.LSTM, (*_RNN, "input_forget")))
register(
    OpType.CONV_INTEGER,
    Lowering(ExecOp.CONV_INTEGER, ("strides", "pads", "dilations", "group")),
)
register(
    OpType.QLINEARCONV,
    Lowering(ExecOp.QLINEARCONV, ("strides", "pads", "dilations", "group")),
)
register(OpType.GEMM, Lowering(ExecOp.GEMM, ("trans_a", "trans_b", "alpha", "beta", "relu")))
register(OpType.MATMUL, Lowering(ExecOp.MATMUL))
register(OpType.DET, Lowering(ExecOp.DET))
register(OpType.EINSUM, Lowering(ExecOp.EINSUM, ("equation",)))
register(OpType.ADD, Lowering(ExecOp.ADD, ("relu",)))
register(OpType.SUB, Lowering(ExecOp.SUB))
register(OpType.MUL, Lowering(ExecOp.MUL))
register(OpType.SWIGLU, Lowering(ExecOp.SWIGLU, ("alpha",)))
register(OpType.DIV, Lowering(ExecOp.DIV))
register(OpType.RELU, Lowering(ExecOp.RELU))
register(OpType.BATCHNORM, Lowering(ExecOp.BATCHNORM, ("epsilon", "relu")))
register(OpType.MAXPOOL, Lowering(ExecOp.MAXPOOL, _WINDOW))
register(OpType.AVGPOOL, Lowering(ExecOp.AVGPOOL, (*_WINDOW, "count_include_pad")))
register(OpType.GLOBALAVGPOOL, Lowering(ExecOp.GLOBALAVGPOOL))
register(OpType.GLOBALLPPOOL, Lowering(ExecOp.GLOBALLPPOOL, ("p",)))
register(OpType.MAXROIPOOL, Lowering(ExecOp.MAXROIPOOL, ("pooled_shape", "spatial_scale")))
_ROI_ALIGN = ("output_height", "output_width", "sampling_ratio", "spatial_scale", "mode")
register(
    OpType.ROIALIGN,
    Lowering(ExecOp.ROIALIGN, (*_ROI_ALIGN, "coordinate_transformation_mode")),
)
register(
    OpType.GRID_SAMPLE, Lowering(ExecOp.GRID_SAMPLE, ("mode", "padding_mode", "align_corners"))
)
register(OpType.AFFINE_GRID, Lowering(ExecOp.AFFINE_GRID, ("size", "align_corners")))
register(
    OpType.MAXUNPOOL,
    Lowering(ExecOp.MAXUNPOOL, ("kernel_shape", "strides", "pads", "output_shape")),
)
register(OpType.SOFTMAX, Lowering(ExecOp.SOFTMAX, ("axis", "log")))
register(OpType.LAYERNORM, Lowering(ExecOp.LAYERNORM, ("axis", "epsilon")))
register(OpType.QUANTIZE, Lowering(ExecOp.QUANTIZE, ("axis",)))
register(OpType.DEQUANTIZE, Lowering(ExecOp.DEQUANTIZE, ("axis",)))
register(OpType.DYNAMIC_QUANTIZE_LINEAR, Lowering(ExecOp.DYNAMIC_QUANTIZE_LINEAR))
register(OpType.QLINEARMATMUL, Lowering(ExecOp.QLINEARMATMUL))
register(OpType.MATMUL_INTEGER, Lowering(ExecOp.MATMUL_INTEGER))
register(OpType.TRANSPOSE, Lowering(ExecOp.TRANSPOSE, ("perm",)))
register(OpType.CONCAT, Lowering(ExecOp.CONCAT, ("axis",)))
register(OpType.COPY, Lowering(ExecOp.COPY))
register(OpType.UNARY, Lowering(ExecOp.UNARY, ("fn", "alpha", "beta", "i0", "i1")))
register(OpType.BINARY, Lowering(ExecOp.BINARY, ("fn", "i0")))
register(OpType.WHERE, Lowering(ExecOp.WHERE))
register(OpType.CAST, Lowering(ExecOp.CAST))
register(OpType.BITCAST, Lowering(ExecOp.BITCAST))
register(OpType.REDUCE, Lowering(ExecOp.REDUCE, ("fn", "axes", "keepdims")))
register(
    OpType.ARG_REDUCE, Lowering(ExecOp.ARG_REDUCE, ("fn", "axis", "keepdims", "select_last_index"))
)
register(
    OpType.NEGATIVE_LOG_LIKELIHOOD_LOSS,
    Lowering(ExecOp.NEGATIVE_LOG_LIKELIHOOD_LOSS, ("reduction", "ignore_index")),
)
register(
    OpType.SOFTMAX_CROSS_ENTROPY_LOSS,
    Lowering(ExecOp.SOFTMAX_CROSS_ENTROPY_LOSS, ("reduction", "ignore_index")),
)
register(
    OpType.ROTARY_EMBEDDING,
    Lowering(ExecOp.ROTARY_EMBEDDING, ("interleaved", "num_heads", "rotary_embedding_dim")),
)
register(OpType.CUMSUM, Lowering(ExecOp.CUMSUM, ("axis", "exclusive", "reverse", "prod")))
register(OpType.DFT, Lowering(ExecOp.DFT, ("axis", "inverse", "onesided", "dft_length")))
register(OpType.STFT, Lowering(ExecOp.STFT, ("frame_step", "frame_length", "onesided")))
register(
    OpType.ATTENTION,
    Lowering(ExecOp.ATTENTION, (
        "is_causal", "q_num_heads", "kv_num_heads", "qk_matmul_output_mode", "softmax_precision",
        "left_window_size", "right_window_size", "scale", "softcap",
    )),
)  # fmt: skip
register(
    OpType.LINEAR_ATTENTION,
    Lowering(ExecOp.LINEAR_ATTENTION, ("update_rule", "q_num_heads", "kv_num_heads", "scale")),
)
register(OpType.TOPK, Lowering(ExecOp.TOPK, ("axis", "largest", "sorted")))
register(OpType.GATHER, Lowering(ExecOp.GATHER, ("axis",)))
register(OpType.GATHER_ELEMENTS, Lowering(ExecOp.GATHER_ELEMENTS, ("axis",)))
register(OpType.GATHER_ND, Lowering(ExecOp.GATHER_ND, ("batch_dims",)))
register(OpType.SCATTER_ND, Lowering(ExecOp.SCATTER_ND, ("reduction",)))
register(OpType.SCATTER_ELEMENTS, Lowering(ExecOp.SCATTER_ELEMENTS, ("axis", "reduction")))
register(OpType.REVERSE_SEQUENCE, Lowering(ExecOp.REVERSE_SEQUENCE, ("time_axis", "batch_axis")))
register(OpType.TENSOR_SCATTER, Lowering(ExecOp.TENSOR_SCATTER, ("axis", "mode")))
register(OpType.SLICE, Lowering(ExecOp.SLICE, ("starts", "ends", "steps")))
register(OpType.PAD, Lowering(ExecOp.PAD, ("mode", "pads", "value")))
register(OpType.CENTER_CROP_PAD, Lowering(ExecOp.CENTER_CROP_PAD, ("shape",)))
register(OpType.EXPAND, Lowering(ExecOp.EXPAND))
register(OpType.TILE, Lowering(ExecOp.TILE, ("repeats",)))
