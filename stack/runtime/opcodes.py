"""The Executable's own vocabulary: op codes and element-type codes, versioned with the format.

The file stores these numbers, never a name or a value borrowed from the UMD, so renaming or
renumbering a UMD enum member does not change the format. The loader maps them onto the UMD's
request vocabulary through :data:`UMD_OPS` and :data:`UMD_DTYPES` — explicit tables, one entry
per code, checked complete by the tests. Codes are never reused: a retired op keeps its number.
"""

from __future__ import annotations

import enum

import numpy as np

from stack.umd import DType, Layout, OpKind


class ExecOp(enum.IntEnum):
    """Op codes of the Executable's code segment (format 2.x). Never renumber."""

    GEMM = 1
    MATMUL = 2
    CONV2D = 3
    BATCHNORM = 4
    ADD = 5
    MUL = 6
    RELU = 7
    SOFTMAX = 8
    LAYERNORM = 9
    MAXPOOL = 10
    AVGPOOL = 11
    GLOBALAVGPOOL = 12
    QUANTIZE = 13
    DEQUANTIZE = 14
    MATMUL_INTEGER = 15
    QLINEARMATMUL = 16
    TRANSPOSE = 17
    CONCAT = 18
    COPY = 19
    SUB = 20
    DIV = 21
    FILL = 22
    UNARY = 23
    BINARY = 24
    WHERE = 25
    CAST = 26
    REDUCE = 27
    ARG_REDUCE = 28
    CUMSUM = 29
    TOPK = 30
    GATHER = 31
    GATHER_ELEMENTS = 32
    SLICE = 33
    PAD = 34
    EXPAND = 35
    TILE = 36
    GATHER_ND = 37
    CONV_TRANSPOSE = 38
    SCATTER_ND = 39
    SCATTER_ELEMENTS = 40
    MAXUNPOOL = 41
    GLOBALLPPOOL = 42
    MAXROIPOOL = 43
    REVERSE_SEQUENCE = 44
    ROIALIGN = 45
    GRID_SAMPLE = 46
    TENSOR_SCATTER = 47
    COL2IM = 48
    AFFINE_GRID = 49
    DEFORM_CONV = 50
    CENTER_CROP_PAD = 51
    DYNAMIC_QUANTIZE_LINEAR = 52
    CONV_INTEGER = 53
    QLINEARCONV = 54
    BITCAST = 55
    DET = 56
    NEGATIVE_LOG_LIKELIHOOD_LOSS = 57
    SOFTMAX_CROSS_ENTROPY_LOSS = 58
    ROTARY_EMBEDDING = 59
    EINSUM = 60
    SWIGLU = 61
    CAUSAL_CONV_WITH_STATE = 62
    DFT = 63
    STFT = 64
    ATTENTION = 65
    RNN = 66
    GRU = 67
    LINEAR_ATTENTION = 68
    LSTM = 69


class ExecDType(enum.IntEnum):
    """Element-type codes of the Executable's memory plan (format 2.x). Never renumber."""

    F32 = 1
    F16 = 2
    F64 = 3
    I8 = 4
    U8 = 5
    I32 = 6
    I64 = 7
    BOOL = 8

    @property
    def numpy(self) -> np.dtype:
        """The NumPy dtype of the elements."""
        return _NUMPY[self]

    @property
    def itemsize(self) -> int:
        """Bytes per element."""
        return _NUMPY[self].itemsize

    @classmethod
    def from_numpy(cls, dtype: object) -> ExecDType:
        """The code of a NumPy dtype; ValueError listing the known ones when there is none."""
        key = np.dtype(dtype)  # type: ignore[call-overload]
        for code, np_dtype in _NUMPY.items():
            if np_dtype == key:
                return code
        known = ", ".join(str(d) for d in _NUMPY.values())
        raise ValueError(f"no Executable dtype for {key}; known: {known}")


class ExecLayout(enum.IntEnum):
    """Activation-layout codes of an op record (format 2.1+). Never renumber.

    ``NCHW`` (0, the default; what a 2.0 record without the field means): the op's 4-D
    activations are ``[N, C, H, W]``. ``NHWC`` (1): they are ``[N, H, W, C]`` in memory and in
    their tensor records' shapes; which operands are activations is :data:`LAYOUT_OPERANDS`
    (an op not listed there is layout-agnostic: the code says which region it belongs to).
    """

    NCHW = 0
    NHWC = 1


#: Ops whose layout reaches the UMD -> (activation input positions, activation output
#: positions): the loader gives those operands' descriptors the record's layout.
LAYOUT_OPERANDS: dict[ExecOp, tuple[tuple[int, ...], tuple[int, ...]]] = {
    ExecOp.CONV2D: ((0, 3), (0,)),
    ExecOp.MAXPOOL: ((0,), (0,)),
    ExecOp.AVGPOOL: ((0,), (0,)),
    ExecOp.GLOBALAVGPOOL: ((0,), (0,)),
}

#: Executable layout -> the UMD descriptor layout of an activation operand.
UMD_LAYOUTS: dict[ExecLayout, Layout] = {
    ExecLayout.NCHW: Layout.NCHW,
    ExecLayout.NHWC: Layout.NHWC,
}

_NUMPY: dict[ExecDType, np.dtype] = {
    ExecDType.F32: np.dtype(np.float32),
    ExecDType.F16: np.dtype(np.float16),
    ExecDType.F64: np.dtype(np.float64),
    ExecDType.I8: np.dtype(np.int8),
    ExecDType.U8: np.dtype(np.uint8),
    ExecDType.I32: np.dtype(np.int32),
    ExecDType.I64: np.dtype(np.int64),
    ExecDType.BOOL: np.dtype(np.bool_),
}

#: Executable op -> the UMD request op that runs it.
UMD_OPS: dict[ExecOp, OpKind] = {
    ExecOp.GEMM: OpKind.GEMM,
    ExecOp.MATMUL: OpKind.MATMUL,
    ExecOp.CONV2D: OpKind.CONV2D,
    ExecOp.BATCHNORM: OpKind.BATCHNORM,
    ExecOp.ADD: OpKind.ADD,
    ExecOp.MUL: OpKind.MUL,
    ExecOp.RELU: OpKind.RELU,
    ExecOp.SOFTMAX: OpKind.SOFTMAX,
    ExecOp.LAYERNORM: OpKind.LAYERNORM,
    ExecOp.MAXPOOL: OpKind.MAXPOOL,
    ExecOp.AVGPOOL: OpKind.AVGPOOL,
    ExecOp.GLOBALAVGPOOL: OpKind.GLOBALAVGPOOL,
    ExecOp.QUANTIZE: OpKind.QUANTIZE,
    ExecOp.DEQUANTIZE: OpKind.DEQUANTIZE,
    ExecOp.MATMUL_INTEGER: OpKind.MATMUL_INTEGER,
    ExecOp.QLINEARMATMUL: OpKind.QLINEARMATMUL,
    ExecOp.TRANSPOSE: OpKind.TRANSPOSE,
    ExecOp.CONCAT: OpKind.CONCAT,
    ExecOp.COPY: OpKind.COPY,
    ExecOp.SUB: OpKind.SUB,
    ExecOp.DIV: OpKind.DIV,
    ExecOp.FILL: OpKind.FILL,
    ExecOp.UNARY: OpKind.UNARY,
    ExecOp.BINARY: OpKind.BINARY,
    ExecOp.WHERE: OpKind.WHERE,
    ExecOp.CAST: OpKind.CAST,
    ExecOp.REDUCE: OpKind.REDUCE,
    ExecOp.ARG_REDUCE: OpKind.ARG_REDUCE,
    ExecOp.CUMSUM: OpKind.CUMSUM,
    ExecOp.TOPK: OpKind.TOPK,
    ExecOp.GATHER: OpKind.GATHER,
    ExecOp.GATHER_ELEMENTS: OpKind.GATHER_ELEMENTS,
    ExecOp.SLICE: OpKind.SLICE,
    ExecOp.PAD: OpKind.PAD,
    ExecOp.EXPAND: OpKind.EXPAND,
    ExecOp.TILE: OpKind.TILE,
    ExecOp.GATHER_ND: OpKind.GATHER_ND,
    ExecOp.CONV_TRANSPOSE: OpKind.CONV_TRANSPOSE,
    ExecOp.SCATTER_ND: OpKind.SCATTER_ND,
    ExecOp.SCATTER_ELEMENTS: OpKind.SCATTER_ELEMENTS,
    ExecOp.MAXUNPOOL: OpKind.MAXUNPOOL,
    ExecOp.GLOBALLPPOOL: OpKind.GLOBALLPPOOL,
    ExecOp.MAXROIPOOL: OpKind.MAXROIPOOL,
    ExecOp.REVERSE_SEQUENCE: OpKind.REVERSE_SEQUENCE,
    ExecOp.ROIALIGN: OpKind.ROIALIGN,
    ExecOp.GRID_SAMPLE: OpKind.GRID_SAMPLE,
    ExecOp.TENSOR_SCATTER: OpKind.TENSOR_SCATTER,
    ExecOp.COL2IM: OpKind.COL2IM,
    ExecOp.AFFINE_GRID: OpKind.AFFINE_GRID,
    ExecOp.DEFORM_CONV: OpKind.DEFORM_CONV,
    ExecOp.CENTER_CROP_PAD: OpKind.CENTER_CROP_PAD,
    ExecOp.DYNAMIC_QUANTIZE_LINEAR: OpKind.DYNAMIC_QUANTIZE_LINEAR,
    ExecOp.CONV_INTEGER: OpKind.CONV_INTEGER,
    ExecOp.QLINEARCONV: OpKind.QLINEARCONV,
    ExecOp.BITCAST: OpKind.BITCAST,
    ExecOp.DET: OpKind.DET,
    ExecOp.NEGATIVE_LOG_LIKELIHOOD_LOSS: OpKind.NEGATIVE_LOG_LIKELIHOOD_LOSS,
    ExecOp.SOFTMAX_CROSS_ENTROPY_LOSS: OpKind.SOFTMAX_CROSS_ENTROPY_LOSS,
    ExecOp.ROTARY_EMBEDDING: OpKind.ROTARY_EMBEDDING,
    ExecOp.EINSUM: OpKind.EINSUM,
    ExecOp.SWIGLU: OpKind.SWIGLU,
    ExecOp.CAUSAL_CONV_WITH_STATE: OpKind.CAUSAL_CONV_WITH_STATE,
    ExecOp.DFT: OpKind.DFT,
    ExecOp.STFT: OpKind.STFT,
    ExecOp.ATTENTION: OpKind.ATTENTION,
    ExecOp.RNN: OpKind.RNN,
    ExecOp.GRU: OpKind.GRU,
    ExecOp.LINEAR_ATTENTION: OpKind.LINEAR_ATTENTION,
    ExecOp.LSTM: OpKind.LSTM,
}

#: Executable element type -> the UMD's (and KMD's) DType.
UMD_DTYPES: dict[ExecDType, DType] = {
    ExecDType.F32: DType.F32,
    ExecDType.F16: DType.F16,
    ExecDType.F64: DType.F64,
    ExecDType.I8: DType.I8,
    ExecDType.U8: DType.U8,
    ExecDType.I32: DType.I32,
    ExecDType.I64: DType.I64,
    ExecDType.BOOL: DType.BOOL,
}
