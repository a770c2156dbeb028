"""Kernel templates (stages 4–5): per kernel id, what it takes and how a call becomes a blob.

A :class:`KernelTemplate` carries the kernel id, the dtypes the kernel supports (of its first
param), a shape constraint, a launch-configuration function, and the body encoder: the
immediates in the order of the kernel's :class:`~stack.kmd.kernels.abi.KernelAbi`, taken from
the call's attributes (which translators name as the ABI does) or the ABI defaults.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

from stack.kmd.blob import InstructionBlob, LaunchConfig, TensorParam
from stack.kmd.dtypes import DType
from stack.kmd.kernels.abi import KernelAbi, abi_of
from stack.kmd.kernels.ids import KernelId
from stack.umd.errors import InvalidRequestError, UnknownOpError
from stack.umd.launch_cpu import launch_cpu
from stack.umd.launch_gpu import TILED, launch_gpu
from stack.umd.plan import KernelCall
from stack.umd.program import BlobTemplate, template_from

FLOATS = frozenset({DType.F32, DType.F16, DType.F64})
INTS = frozenset({DType.I8, DType.U8, DType.I32, DType.I64})
QUANT = frozenset({DType.I8, DType.U8})
HALF_SINGLE = frozenset({DType.F32, DType.F16})
ALL = frozenset(DType)
_TILE = 16
#: The target whose launches are CPU ones (:mod:`stack.umd.launch_cpu`).
CPU_TARGET = "numpy"
_BLOCK = 256


def _ceil(a: int, b: int) -> int:
    return max(1, -(-a // b))


def launch_elementwise(call: KernelCall) -> LaunchConfig:
    """One thread per output element, 256 per block."""
    n = math.prod(call.outs[0].shape)
    return LaunchConfig((_ceil(n, _BLOCK), 1, 1), (_BLOCK, 1, 1), 0)


def launch_tiled(call: KernelCall) -> LaunchConfig:
    """16x16 output tiles over the last two dims, one grid z-slice per leading index."""
    shape = call.outs[0].shape
    rows = shape[-2] if len(shape) >= 2 else 1
    cols = shape[-1] if shape else 1
    batch = math.prod(shape[:-2]) if len(shape) > 2 else 1
    item = call.ins[0].dtype.itemsize
    return LaunchConfig(
        (_ceil(cols, _TILE), _ceil(rows, _TILE), max(1, batch)),
        (_TILE, _TILE, 1),
        2 * _TILE * _TILE * item,
    )


def launch_rows(call: KernelCall) -> LaunchConfig:
    """One block per reduced row (softmax, layer norm), a power-of-two block over the row."""
    shape = call.ins[0].shape
    axis = int(call.attrs.get("axis", -1))  # type: ignore[arg-type]
    axis = axis + len(shape) if axis < 0 else axis
    rows = math.prod(shape[:axis])
    cols = math.prod(shape[axis:])
    block = min(_BLOCK, 1 << max(0, (cols - 1).bit_length()))
    return LaunchConfig((max(1, rows), 1, 1), (max(1, block), 1, 1), block * 4)


@dataclass(frozen=True, slots=True)
class KernelTemplate:
    """How to instantiate one kernel: supported dtypes, shape constraint, launch, body."""

    kernel_id: KernelId
    dtypes: frozenset[DType]
    launch: Callable[[KernelCall], LaunchConfig] = launch_elementwise
    constraint: Callable[[KernelCall], str | None] | None = None

    @property
    def abi(self) -> KernelAbi:
        return abi_of(self.kernel_id)

    def body(self, call: KernelCall) -> tuple[tuple[int, ...], tuple[float, ...]]:
        """The immediates, in ABI order, from the call's attrs (ABI defaults where absent)."""
        abi = self.abi
        if abi.int_list is not None:
            ints = tuple(int(v) for v in call.attrs.get(abi.int_list, ()))  # type: ignore[union-attr]
        else:
            ints = tuple(int(_imm(call, imm.name, imm.default)) for imm in abi.ints)
        floats = tuple(float(_imm(call, imm.name, imm.default)) for imm in abi.floats)
        return ints, floats

    def instantiate(
        self,
        call: KernelCall,
        target: str = CPU_TARGET,
        threads: int = 1,
        tiles: int | None = None,
        block: int | None = None,
    ) -> BlobTemplate:
        """Stage 4 (launch) and 5 (encode) for one call; addresses are patched later. On the
        ``numpy`` target the launch is the CPU one (:mod:`stack.umd.launch_cpu`: tiles of the
        kernel's grid axis for ``threads`` compute threads; ``tiles``: a tuned tile count, None for
        the default); on a GPU, GEMM and CONV2D take :mod:`stack.umd.launch_gpu`'s (``block``: a
        tuned tile edge, None for the library path), every other kernel this template's."""
        if self.constraint is not None:
            why = self.constraint(call)
            if why is not None:
                raise InvalidRequestError(f"{self.kernel_id.name}: {why}", field="inputs")
        ints, floats = self.body(call)
        params = tuple(TensorParam(0, p.nbytes, p.dtype, p.shape) for p in call.params)
        if target == CPU_TARGET:
            launch = launch_cpu(call, threads, tiles)
        elif self.kernel_id in TILED:
            launch = launch_gpu(call, block)
        else:
            launch = self.launch(call)
        blob = InstructionBlob(self.kernel_id, params, launch, ints, floats)
        return template_from(blob, tuple(p.ref for p in call.params))


def _imm(call: KernelCall, name: str, default: int | float | None) -> int | float:
    value = call.attrs.get(name, default)
    if value is None:
        raise InvalidRequestError(f"missing required attribute {name}", field=f"attrs.{name}")
    if not isinstance(value, int | float):
        raise InvalidRequestError(f"attribute {name} must be a number", field=f"attrs.{name}")
    return value


class TemplateRegistry:
    """Kernel id → template; ``get`` of an unknown id lists the known ones."""

    def __init__(self) -> None:
        self._by_id: dict[KernelId, KernelTemplate] = {}

    def register(self, template: KernelTemplate) -> None:
        abi_of(template.kernel_id)  # a template needs the kernel's ABI
        self._by_id[template.kernel_id] = template

    def get(self, kernel_id: KernelId) -> KernelTemplate:
        try:
            return self._by_id[kernel_id]
        except KeyError:
            known = ", ".join(k.name for k in self._by_id)
            raise UnknownOpError(
                f"no template for kernel {kernel_id!r}; known: {known}", field="op"
            ) from None

    def __contains__(self, kernel_id: object) -> bool:
        return kernel_id in self._by_id


def _two_d(call: KernelCall) -> str | None:
    a, b = call.ins[0].shape, call.ins[1].shape
    return None if len(a) == 2 and len(b) == 2 else f"A and B must be 2-D, got {a} and {b}"


def _four_d(call: KernelCall) -> str | None:
    x = call.ins[0].shape
    return None if len(x) == 4 else f"X must be 4-D NCHW, got {x}"


def default_templates() -> TemplateRegistry:
    """The template table of the reference kernels."""
    reg = TemplateRegistry()
    k = KernelId
    for kid, dtypes, launch, constraint in (
        (k.GEMM, FLOATS, launch_tiled, _two_d),
        (k.MATMUL, FLOATS, launch_tiled, None),
        (k.DET, FLOATS, launch_elementwise, None),
        (k.EINSUM, FLOATS | {DType.I32, DType.I64}, launch_elementwise, None),
        (k.GEMM_I8, QUANT, launch_tiled, None),
        (k.QLINEARMATMUL, QUANT, launch_tiled, None),
        (k.CONV2D, FLOATS, launch_tiled, _four_d),
        (k.CONV_TRANSPOSE, FLOATS, launch_tiled, _four_d),
        (k.COL2IM, FLOATS, launch_elementwise, None),
        (k.DEFORM_CONV, FLOATS, launch_tiled, _four_d),
        (k.CONV_INTEGER, QUANT, launch_tiled, _four_d),
        (k.QLINEARCONV, QUANT, launch_tiled, _four_d),
        (k.MAXPOOL, FLOATS | QUANT, launch_tiled, _four_d),
        (k.AVGPOOL, FLOATS, launch_tiled, _four_d),
        (k.GLOBALAVGPOOL, FLOATS, launch_elementwise, _four_d),
        (k.GLOBALLPPOOL, FLOATS, launch_elementwise, _four_d),
        (k.MAXROIPOOL, FLOATS, launch_tiled, _four_d),
        (k.ROIALIGN, FLOATS, launch_tiled, _four_d),
        (k.MAXUNPOOL, FLOATS, launch_elementwise, None),
        (k.GRID_SAMPLE, FLOATS, launch_elementwise, None),
        (k.AFFINE_GRID, FLOATS, launch_elementwise, None),
        (k.BATCHNORM, FLOATS, launch_elementwise, None),
        (k.SOFTMAX, FLOATS, launch_rows, None),
        (k.LAYERNORM, FLOATS, launch_rows, None),
        (k.ADD, FLOATS | INTS, launch_elementwise, None),
        (k.SUB, FLOATS | INTS, launch_elementwise, None),
        (k.MUL, FLOATS | INTS, launch_elementwise, None),
        (k.DIV, FLOATS | INTS, launch_elementwise, None),
        (k.RELU, FLOATS | INTS, launch_elementwise, None),
        (k.SWIGLU, FLOATS, launch_elementwise, None),
        (k.QUANTIZE, FLOATS, launch_elementwise, None),
        (k.DEQUANTIZE, QUANT | {DType.I32}, launch_elementwise, None),
        (k.DYNAMIC_QUANTIZE_LINEAR, frozenset({DType.F32}), launch_elementwise, None),
        (k.TRANSPOSE, ALL, launch_elementwise, None),
        (k.CONCAT, ALL, launch_elementwise, None),
        (k.COPY, ALL, launch_elementwise, None),
        (k.FILL, ALL, launch_elementwise, None),
        (k.UNARY, ALL, launch_elementwise, None),
        (k.BINARY, ALL, launch_elementwise, None),
        (k.WHERE, ALL, launch_elementwise, None),
        (k.CAST, ALL, launch_elementwise, None),
        (k.BITCAST, ALL, launch_elementwise, None),
        (k.REDUCE, ALL, launch_rows, None),
        (k.NEGATIVE_LOG_LIKELIHOOD_LOSS, FLOATS, launch_elementwise, None),
        (k.SOFTMAX_CROSS_ENTROPY_LOSS, FLOATS, launch_elementwise, None),
        (k.ROTARY_EMBEDDING, FLOATS, launch_elementwise, None),
        (k.CAUSAL_CONV_WITH_STATE, FLOATS, launch_elementwise, None),
        (k.ATTENTION, FLOATS, launch_elementwise, None),
        (k.LINEAR_ATTENTION, HALF_SINGLE, launch_elementwise, None),
        (k.RNN, FLOATS, launch_elementwise, None),
        (k.GRU, FLOATS, launch_elementwise, None),
        (k.LSTM, FLOATS, launch_elementwise, None),
        (k.ARG_REDUCE, FLOATS | INTS, launch_rows, None),
        (k.CUMSUM, FLOATS | INTS, launch_rows, None),
        (k.DFT, FLOATS, launch_rows, None),
        (k.STFT, FLOATS, launch_rows, None),
        (k.TOPK, FLOATS | INTS, launch_rows, None),
        (k.GATHER, ALL, launch_elementwise, None),
        (k.GATHER_ELEMENTS, ALL, launch_elementwise, None),
        (k.GATHER_ND, ALL, launch_elementwise, None),
        (k.SCATTER_ND, ALL, launch_elementwise, None),
        (k.SCATTER_ELEMENTS, ALL, launch_elementwise, None),
        (k.REVERSE_SEQUENCE, ALL, launch_elementwise, None),
        (k.TENSOR_SCATTER, ALL, launch_elementwise, None),
        (k.SLICE, ALL, launch_elementwise, None),
        (k.PAD, ALL, launch_elementwise, None),
        (k.CENTER_CROP_PAD, ALL, launch_elementwise, None),
        (k.EXPAND, ALL, launch_elementwise, None),
        (k.TILE, ALL, launch_elementwise, None),
    ):
        reg.register(KernelTemplate(kid, dtypes, launch, constraint))
    return reg
