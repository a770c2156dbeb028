"""Each kernel's ABI: which tensor params in which order, what every immediate means.

This table is the one place the UMD's templates encode against. Conventions for every kernel:

* params are ``inputs`` (required, in order), then the present ``optional`` inputs (a trailing
  run may be left out; an optional input can only be given if the ones before it are), then the
  ``outputs`` (always last). ``variadic`` kernels (CONCAT) take one or more ``inputs`` instead.
* ``ints`` / ``floats`` are positional immediates; a trailing run may be left out and then takes
  the defaults listed. ``int_list`` kernels (TRANSPOSE) take a free-length ints list instead.
* Output shapes are given by the output descriptors; the kernel checks them against the inputs.
* ``grid`` names the kernel's *grid axis* on the CPU device: the launch configuration's
  ``grid[0]`` is how many tiles that axis is cut into, the tiles shared out over the device's
  worker threads (:mod:`stack.kmd.kernels.parallel`). Kernels without one run whole.
"""

from __future__ import annotations

from dataclasses import dataclass

from stack.kmd.errors import UnknownKernelError
from stack.kmd.kernels.ids import KernelId


@dataclass(frozen=True, slots=True)
class Imm:
    """A named immediate with a default (None: required)."""

    name: str
    default: int | float | None = None
    doc: str = ""


@dataclass(frozen=True, slots=True)
class KernelAbi:
    """The contract of one kernel id (see the module docstring for the conventions)."""

    kernel_id: KernelId
    inputs: tuple[str, ...]
    outputs: tuple[str, ...]
    optional: tuple[str, ...] = ()
    ints: tuple[Imm, ...] = ()
    floats: tuple[Imm, ...] = ()
    variadic: bool = False
    int_list: str | None = None
    doc: str = ""
    grid: str = ""

    @property
    def name(self) -> str:
        """The kernel's name (the KernelId member name)."""
        return self.kernel_id.name

    def int_values(self, given: tuple[int, ...]) -> tuple[int, ...]:
        """``given`` completed with the defaults (callers have checked the count)."""
        if self.int_list is not None:
            return given
        return given + tuple(int(i.default or 0) for i in self.ints[len(given) :])

    def float_values(self, given: tuple[float, ...]) -> tuple[float, ...]:
        """``given`` completed with the defaults."""
        return given + tuple(float(f.default or 0.0) for f in self.floats[len(given) :])


_BINARY = ("A", "B")

ABIS: dict[KernelId, KernelAbi] = {}


def register(abi: KernelAbi) -> KernelAbi:
    """Add ``abi`` to the table (one per kernel id)."""
    ABIS[abi.kernel_id] = abi
    return abi


def abi_of(kernel_id: KernelId | int) -> KernelAbi:
    """The ABI of ``kernel_id``; UnknownKernelError (listing the known ones) if none."""
    try:
        return ABIS[KernelId(kernel_id)]
    except (KeyError, ValueError):
        raise UnknownKernelError(
            f"no kernel ABI for id {kernel_id}",
            name=str(kernel_id),
            known=tuple(k.name for k in ABIS),
        ) from None


for _abi in (
    KernelAbi(
        KernelId.GEMM, ("A", "B"), ("Y",), optional=("C",),
        ints=(Imm("trans_a", 0), Imm("trans_b", 0), Imm("relu", 0, "apply ReLU after the sum")),
        floats=(Imm("alpha", 1.0), Imm("beta", 1.0)),
        doc="Y = act(alpha * op(A) @ op(B) + beta * C); A, B 2-D; C broadcast to Y (bias).",
        grid="rows of Y",
    ),
    KernelAbi(
        KernelId.MATMUL, _BINARY, ("Y",),
        doc="numpy.matmul semantics: batched, broadcasting batch dims, 1-D operands promoted.",
        grid="rows of Y (axis -2; A and B at least 2-D)",
    ),
    KernelAbi(
        KernelId.CONV2D, ("X", "W"), ("Y",), optional=("B", "R"),
        ints=(
            Imm("stride_h", 1), Imm("stride_w", 1), Imm("pad_top", 0), Imm("pad_left", 0),
            Imm("pad_bottom", 0), Imm("pad_right", 0), Imm("dilation_h", 1),
            Imm("dilation_w", 1), Imm("group", 1), Imm("relu", 0),
            Imm("pool_h", 0, "fused max pool window height (0: no pool)"), Imm("pool_w", 0),
            Imm("pool_stride_h", 1), Imm("pool_stride_w", 1), Imm("pool_pad_top", 0),
            Imm("pool_pad_left", 0), Imm("pool_pad_bottom", 0), Imm("pool_pad_right", 0),
            Imm("algorithm", 0, "0 direct; 1 Winograd F(2x2,3x3): W is U[4,4,M,C]"),
            Imm("layout", 0, "activations X, R, Y: 0 NCHW, 1 NHWC (stack.kmd.kernels.layout)"),
        ),
        doc="NCHW (layout 1: X, R and Y NHWC, [N,H,W,C]; W and B unchanged). X[N,C,H,W],"
        " W[M,C/group,kH,kW], B[M], R[N,M,oH,oW] -> Y = act(conv + B + R);"
        " R is an optional fused residual (after B), act an optional fused ReLU. With pool_h > 0"
        " a max pool (MAXPOOL's window, padding never wins, output size from Y) follows the"
        " epilogue: Y is the pooled output and the convolution's own output (oH, oW from X, W"
        " and the conv attributes) never leaves the kernel's scratch. algorithm 1 (Winograd"
        " F(2x2,3x3); 3x3 kernel, stride 1, dilation 1, group 1, no pool): W holds the weights"
        " transformed once by the compiler, U[a,b,m,c] = (G g[m,c] G^T)[a,b] with"
        " G = [[1,0,0],[1/2,1/2,1/2],[1/2,-1/2,1/2],[0,0,1]].",
        grid="output channels M (one image, group 1)",
    ),
    KernelAbi(
        KernelId.CONV_TRANSPOSE, ("X", "W"), ("Y",), optional=("B",),
        ints=(
            Imm("stride_h", 1), Imm("stride_w", 1), Imm("pad_top", 0), Imm("pad_left", 0),
            Imm("pad_bottom", 0), Imm("pad_right", 0), Imm("dilation_h", 1),
            Imm("dilation_w", 1), Imm("group", 1),
        ),
        doc="NCHW. X[N,C,H,W], W[C,M/group,kH,kW], B[M] -> Y[N,M,oH,oW] = transposed conv + B;"
        " oH = stride_h*(H-1) + dilation_h*(kH-1) + 1 - pad_top - pad_bottom (likewise oW);"
        " a negative pad extends the output with zeros.",
    ),
    KernelAbi(
        KernelId.COL2IM, ("X",), ("Y",), int_list="spec",
        doc="ONNX Col2Im: the blocks of X[N,C*prod(block),L] scatter-added into Y[N,C,*image] "
        "at their sliding places; ints: block_shape, dilations, pads (begins, ends), strides.",
    ),
    KernelAbi(
        KernelId.BATCHNORM, ("X", "scale", "bias", "mean", "var"), ("Y",),
        ints=(Imm("relu", 0),), floats=(Imm("epsilon", 1e-5),),
        doc="Inference: per channel (axis 1): (X - mean) / sqrt(var + eps) * scale + bias.",
    ),
    KernelAbi(KernelId.ADD, _BINARY, ("Y",), ints=(Imm("relu", 0),), doc="Y = A + B (broadcast)."),
    KernelAbi(KernelId.MUL, _BINARY, ("Y",), doc="Y = A * B (broadcast)."),
    KernelAbi(KernelId.SUB, _BINARY, ("Y",), doc="Y = A - B (broadcast)."),
    KernelAbi(KernelId.DIV, _BINARY, ("Y",), doc="Y = A / B (broadcast; integer: truncation)."),
    KernelAbi(KernelId.RELU, ("X",), ("Y",), doc="Y = max(X, 0)."),
    KernelAbi(
        KernelId.SOFTMAX, ("X",), ("Y",), ints=(Imm("axis", -1), Imm("log", 0, "log-softmax")),
        doc="Numerically stable softmax along axis (log = 1: its logarithm, LogSoftmax).",
    ),
    KernelAbi(
        KernelId.LAYERNORM, ("X", "scale"), ("Y",), optional=("bias",),
        ints=(Imm("axis", -1, "normalise over dims axis..end"),), floats=(Imm("epsilon", 1e-5),),
        doc="Y = (X - mean) / sqrt(var + eps) * scale + bias over the trailing dims from axis.",
    ),
    KernelAbi(
        KernelId.QUANTIZE, ("X", "scale"), ("Y",), optional=("zero_point",), ints=(Imm("axis", 1),),
        doc="Y = saturate(round_half_even(X / scale) + zp) to Y's dtype (I8/U8); per tensor when "
        "scale has one element, else per axis.",
    ),
    KernelAbi(
        KernelId.DEQUANTIZE, ("X", "scale"), ("Y",), optional=("zero_point",),
        ints=(Imm("axis", 1),),
        doc="Y = (X - zp) * scale; per tensor or per axis like QUANTIZE.",
    ),
    KernelAbi(
        KernelId.GEMM_I8, _BINARY, ("Y",), optional=("a_zero_point", "b_zero_point"),
        ints=(Imm("has_a_zero_point", -1), Imm("has_b_zero_point", -1)),
        doc="ONNX MatMulInteger: (A - a_zp) @ (B - b_zp) with int32 accumulation, Y I32; "
        "batched like MATMUL. has_*_zero_point = 1/0 says which zero points are present "
        "(-1: by position); a_zp per tensor or per row of A, b_zp per tensor or per column.",
    ),
    KernelAbi(
        KernelId.QLINEARMATMUL,
        ("A", "a_scale", "a_zero_point", "B", "b_scale", "b_zero_point", "y_scale", "y_zero_point"),
        ("Y",),
        doc="ONNX QLinearMatMul, inputs in ONNX order; int32 accumulation, requantised to Y.",
    ),
    KernelAbi(
        KernelId.TRANSPOSE, ("X",), ("Y",), int_list="perm",
        doc="Y = X.transpose(perm); ints are the permutation (empty: reverse).",
    ),
    KernelAbi(
        KernelId.CONCAT, ("X",), ("Y",), variadic=True, ints=(Imm("axis", 0),),
        doc="Y = concatenate(inputs, axis); one or more inputs.",
    ),
    KernelAbi(
        KernelId.COPY, ("X",), ("Y",),
        doc="Byte copy (reshape materialisation): X and Y must have the same byte size.",
    ),
    KernelAbi(
        KernelId.FILL, (), ("Y",), floats=(Imm("value", 0.0),), doc="Y[...] = value (in Y's dtype)."
    ),
    KernelAbi(
        KernelId.UNARY, ("X",), ("Y",),
        ints=(Imm("fn", None, "UnaryFn"), Imm("i0", 0), Imm("i1", 0)),
        floats=(Imm("alpha", 0.0), Imm("beta", 0.0)),
        doc="Y = fn(X) element-wise (stack.kmd.kernels.unary.UnaryFn); Y BOOL for predicates.",
    ),
    KernelAbi(
        KernelId.BINARY, _BINARY, ("Y",), ints=(Imm("fn", None, "BinaryFn"), Imm("i0", 0)),
        doc="Y = fn(A, B) broadcast (stack.kmd.kernels.binary.BinaryFn); Y BOOL for comparisons "
        "and logic.",
    ),
    KernelAbi(KernelId.WHERE, ("cond", "X", "Y"), ("Z",), doc="Z = cond ? X : Y (broadcast)."),
    KernelAbi(KernelId.CAST, ("X",), ("Y",), doc="Y = X converted to Y's dtype (C conversion)."),
    KernelAbi(
        KernelId.BITCAST, ("X",), ("Y",),
        doc="ONNX BitCast: Y = X's bytes read as Y's dtype (X's shape and element width).",
    ),
    KernelAbi(
        KernelId.REDUCE, ("X",), ("Y",),
        ints=(Imm("fn", None, "ReduceFn"), Imm("axes_mask", 0, "bit i: reduce axis i")),
        doc="Y = fn over the masked axes (stack.kmd.kernels.reduce.ReduceFn), kept or dropped.",
    ),
    KernelAbi(
        KernelId.ARG_REDUCE, ("X",), ("Y",),
        ints=(Imm("fn", 0, "0 argmax, 1 argmin"), Imm("axis", 0), Imm("select_last_index", 0)),
        doc="Y (I64) = index of the extreme along axis.",
    ),
    KernelAbi(
        KernelId.CUMSUM, ("X",), ("Y",),
        ints=(Imm("axis", 0), Imm("exclusive", 0), Imm("reverse", 0), Imm("prod", 0)),
        doc="Y = cumulative sum (prod = 1: product) along axis.",
    ),
    KernelAbi(
        KernelId.TOPK, ("X",), ("values", "indices"),
        ints=(Imm("axis", -1), Imm("largest", 1), Imm("sorted", 1)),
        doc="The k largest / smallest along axis (k from the outputs' shape), indices I64.",
    ),
    KernelAbi(
        KernelId.GATHER, ("data", "indices"), ("Y",), ints=(Imm("axis", 0),),
        doc="Y = take(data, indices, axis); negative indices count from the end.",
    ),
    KernelAbi(KernelId.GATHER_ELEMENTS, ("data", "indices"), ("Y",), ints=(Imm("axis", 0),),
              doc="Y = take_along_axis(data, indices, axis)."),
    KernelAbi(
        KernelId.REVERSE_SEQUENCE, ("X", "sequence_lens"), ("Y",),
        ints=(Imm("time_axis", 0), Imm("batch_axis", 1)),
        doc="ONNX ReverseSequence: batch b's first sequence_lens[b] time steps reversed."),
    KernelAbi(
        KernelId.GATHER_ND, ("data", "indices"), ("Y",), ints=(Imm("batch_dims", 0),),
        doc="ONNX GatherND: indices' last axis addresses data's axes after batch_dims.",
    ),
    KernelAbi(
        KernelId.SCATTER_ND, ("data", "indices", "updates"), ("Y",),
        ints=(Imm("reduction", 0, "ScatterReduction: 0 none, 1 add, 2 mul, 3 max, 4 min"),),
        doc="ONNX ScatterND: Y = data with updates at the places indices' last axis addresses; "
        "repeated places take the updates in order (none: the last one wins).",
    ),
    KernelAbi(
        KernelId.SCATTER_ELEMENTS, ("data", "indices", "updates"), ("Y",),
        ints=(Imm("axis", 0),
              Imm("reduction", 0, "ScatterReduction: 0 none, 1 add, 2 mul, 3 max, 4 min")),
        doc="ONNX ScatterElements: Y = data with each update at its index on axis; repeated "
        "places take the updates in indices' row-major order (none: the last one wins).",
    ),
    KernelAbi(
        KernelId.TENSOR_SCATTER, ("past_cache", "update"), ("Y",), optional=("write_indices",),
        ints=(Imm("axis", None, "the sequence axis, 1..rank-1"),
              Imm("mode", 0, "TensorScatterMode: 0 linear, 1 circular")),
        doc="ONNX TensorScatter: Y = past_cache with batch b's update steps written on axis from "
        "write_indices[b] (absent: 0); circular: modulo the axis' size."),
    KernelAbi(
        KernelId.SLICE, ("X",), ("Y",), int_list="spec",
        doc="Y = X[start:stop:step, ...]; ints: (start, stop, step) per axis, clamped.",
    ),
    KernelAbi(
        KernelId.PAD, ("X",), ("Y",), int_list="spec", floats=(Imm("value", 0.0),),
        doc="ints: (mode, begins..., ends...), mode 0 constant, 1 reflect, 2 edge, 3 wrap; "
        "negative pads crop.",
    ),
    KernelAbi(KernelId.EXPAND, ("X",), ("Y",), doc="Y = X broadcast to Y's shape."),
    KernelAbi(
        KernelId.TILE, ("X",), ("Y",), int_list="repeats",
        doc="Y = X repeated along every axis (ints: repeats per axis).",
    ),
):  # fmt: skip
    register(_abi)

from stack.kmd.kernels import (  # noqa: E402,F401  (the ABIs of their own modules register)
    abi_attention,
    abi_causal_conv_with_state,
    abi_center_crop_pad,
    abi_conv_integer,
    abi_deform_conv,
    abi_det,
    abi_dft,
    abi_dynamic_quantize,
    abi_einsum,
    abi_grid,
    abi_linear_attention,
    abi_negative_log_likelihood_loss,
    abi_pool,
    abi_rnn,
    abi_rotary_embedding,
    abi_softmax_cross_entropy_loss,
    abi_swiglu,
)
