"""The quantisation family: QUANTIZE (float → I8/U8), DEQUANTIZE (I8/U8/I32 → float) and
DYNAMIC_QUANTIZE_LINEAR (F32 → U8 y, with the F32 y_scale and U8 y_zero_point it computed)."""

from __future__ import annotations

import math

from stack.kmd.dtypes import DType
from stack.kmd.kernels.ids import KernelId
from stack.umd.errors import InvalidRequestError, ShapeError, UnsupportedDtypeError
from stack.umd.ops import OpKind, OpRequest
from stack.umd.plan import KernelCall, Semantic
from stack.umd.registry import OpTranslator
from stack.umd.templates import FLOATS, QUANT, TemplateRegistry
from stack.umd.translators._common import Builder, attr_int, check_dtype, need_counts

_KERNEL = {
    OpKind.QUANTIZE: KernelId.QUANTIZE,
    OpKind.DEQUANTIZE: KernelId.DEQUANTIZE,
    OpKind.DYNAMIC_QUANTIZE_LINEAR: KernelId.DYNAMIC_QUANTIZE_LINEAR,
}
#: DYNAMIC_QUANTIZE_LINEAR's outputs, in order, and the dtype each must have.
_DYNAMIC_OUTPUTS = (("y", DType.U8), ("y_scale", DType.F32), ("y_zero_point", DType.U8))


class QuantTranslator(OpTranslator):
    """Per-tensor or per-axis (de)quantisation, whose scale and zero point are input tensors,
    and dynamic quantisation, whose scale and zero point are outputs (scalars)."""

    family = "quant"
    ops = frozenset(_KERNEL)

    def parse(self, req: OpRequest, templates: TemplateRegistry) -> Semantic:
        if req.op is OpKind.DYNAMIC_QUANTIZE_LINEAR:
            return _dynamic(req, templates)
        kernel = _KERNEL[req.op]
        need_counts(req, (2, 3))
        check_dtype(templates, kernel, req.inputs[0].dtype, "inputs[0].dtype")
        out = req.outputs[0].dtype
        if req.op is OpKind.QUANTIZE and out not in QUANT:
            raise UnsupportedDtypeError(
                f"QUANTIZE writes I8 or U8, not {out.name}", field="outputs[0].dtype"
            )
        if req.op is OpKind.DEQUANTIZE and out not in FLOATS:
            raise UnsupportedDtypeError(
                f"DEQUANTIZE writes a float, not {out.name}", field="outputs[0].dtype"
            )
        if len(req.inputs) == 3 and req.inputs[2].dtype not in (*QUANT, DType.I32):
            raise UnsupportedDtypeError("zero point must be integer", field="inputs[2].dtype")
        ndim = len(req.inputs[0].shape)
        axis = attr_int(req.attr_map(), "axis", 1)
        if ndim and not -ndim <= axis < ndim:
            raise InvalidRequestError(f"axis {axis} out of range", field="attrs.axis")
        b = Builder(req)
        ins = tuple(b.input(i) for i in range(len(req.inputs)))
        kattrs = {"axis": axis + ndim if axis < 0 else axis}
        return b.build(KernelCall(kernel, (*ins, b.output(0)), len(ins), kattrs))

    def infer(self, call: KernelCall) -> tuple[tuple[int, ...], ...]:
        x = call.ins[0].shape
        if call.kernel_id is KernelId.DYNAMIC_QUANTIZE_LINEAR:
            return (x, (), ())
        n = math.prod(call.ins[1].shape)
        if n != 1 and (not x or n != x[call.i("axis")]):
            raise ShapeError(
                f"scale has {n} values: needs 1 or the axis size", field="inputs[1].shape"
            )
        if len(call.ins) > 2 and math.prod(call.ins[2].shape) != n:
            raise ShapeError("zero point must match the scale", field="inputs[2].shape")
        return (x,)


def _dynamic(req: OpRequest, templates: TemplateRegistry) -> Semantic:
    """DYNAMIC_QUANTIZE_LINEAR: one F32 input x; outputs y (U8, x's shape), y_scale (F32) and
    y_zero_point (U8), both scalars (shape ``()``); no attributes."""
    kernel = KernelId.DYNAMIC_QUANTIZE_LINEAR
    need_counts(req, (1, 1), len(_DYNAMIC_OUTPUTS))
    check_dtype(templates, kernel, req.inputs[0].dtype, "inputs[0].dtype")
    for j, ((name, want), out) in enumerate(zip(_DYNAMIC_OUTPUTS, req.outputs, strict=True)):
        if out.dtype is not want:
            raise UnsupportedDtypeError(
                f"DYNAMIC_QUANTIZE_LINEAR writes {name} as {want.name}, not {out.dtype.name}",
                field=f"outputs[{j}].dtype",
            )
    b = Builder(req)
    outs = tuple(b.output(j) for j in range(len(req.outputs)))
    return b.build(KernelCall(kernel, (b.input(0), *outs), 1))
