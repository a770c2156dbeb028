"""The quantised convolution: QLINEARCONV (ONNX QLinearConv; an NCHW kernel; CONV_INTEGER's
``strides``, ``pads`` — top, left, bottom, right —, ``dilations`` and ``group``).

Inputs in ONNX's order, as QLINEARMATMUL's: x [N, C, H, W] (I8/U8), x_scale (F32, one
element), x_zero_point (one element, x's dtype), w [M, C/group, kH, kW] (I8/U8), w_scale (F32,
one element or M, per output channel), w_zero_point (one element or M, w's dtype), y_scale (F32,
one element), y_zero_point (one element, I8/U8) and the optional bias B [M] I32; y
[N, M, oH, oW] of y_zero_point's dtype, oH and oW the convolution's. x and y are activations:
4-D NHWC ones are converted around the kernel, as CONV2D's and CONV_INTEGER's; the others are
taken as they are. The window is read by CONV_INTEGER's helpers
(:mod:`stack.umd.translators.conv_integer`).
"""

from __future__ import annotations

from stack.kmd.dtypes import DType
from stack.kmd.kernels.ids import KernelId
from stack.umd.errors import ShapeError, UnsupportedDtypeError
from stack.umd.ops import OpKind, OpRequest
from stack.umd.plan import KernelCall, Semantic
from stack.umd.registry import OpTranslator
from stack.umd.templates import TemplateRegistry
from stack.umd.translators._common import check_dtype, nchw_call, need_counts, window_attrs
from stack.umd.translators.conv_integer import check_elements, integer_conv_shape

#: Where w is among the inputs (x is input 0).
_W = 3


def _expect(req: OpRequest, i: int, what: str, want: DType, whose: str) -> None:
    got = req.inputs[i].dtype
    if got is not want:
        raise UnsupportedDtypeError(f"inputs[{i}] ({what}) is {got.name}, expected {whose}",
                                    field=f"inputs[{i}].dtype")  # fmt: skip


def _check_dtypes(req: OpRequest, templates: TemplateRegistry) -> None:
    """x, w and y_zero_point I8/U8 (the template's), the scales F32, x's and w's zero points of
    their tensor's dtype, B I32, y of y_zero_point's dtype."""
    kernel = KernelId.QLINEARCONV
    for i in (0, _W, 7):
        check_dtype(templates, kernel, req.inputs[i].dtype, f"inputs[{i}].dtype")
    for i in (1, 4, 6):
        _expect(req, i, "a scale", DType.F32, "F32")
    for i, of in ((2, 0), (5, _W)):
        _expect(req, i, "a zero point", req.inputs[of].dtype, f"inputs[{of}]'s "
                f"{req.inputs[of].dtype.name}")  # fmt: skip
    if len(req.inputs) > 8:
        _expect(req, 8, "the bias", DType.I32, "I32")
    y, y_zp = req.outputs[0].dtype, req.inputs[7].dtype
    if y is not y_zp:
        raise UnsupportedDtypeError(f"QLINEARCONV writes y_zero_point's {y_zp.name}, not "
                                    f"{y.name}", field="outputs[0].dtype")  # fmt: skip


class QLinearConvTranslator(OpTranslator):
    """QLINEARCONV → the NCHW kernel; converts NHWC activations around it."""

    family = "qlinear_conv"
    ops = frozenset({OpKind.QLINEARCONV})

    def parse(self, req: OpRequest, templates: TemplateRegistry) -> Semantic:
        need_counts(req, (8, 9))
        _check_dtypes(req, templates)
        return nchw_call(req, KernelId.QLINEARCONV, window_attrs(req.attr_map(), "group"))

    def infer(self, call: KernelCall) -> tuple[tuple[int, ...], ...]:
        n, m, oh, ow = integer_conv_shape(call, _W)
        per_channel = (1,) if m == 1 else (1, m)  # w's scale and zero point
        for at, name, allowed in (
            (1, "x_scale", (1,)), (2, "x_zero_point", (1,)), (4, "w_scale", per_channel),
            (5, "w_zero_point", per_channel), (6, "y_scale", (1,)), (7, "y_zero_point", (1,)),
        ):  # fmt: skip
            check_elements(call, at, name, allowed)
        if len(call.ins) > 8 and call.ins[8].shape != (m,):
            raise ShapeError(f"B must be [{m}], one per output channel, got shape "
                             f"{call.ins[8].shape}", field="inputs[8].shape")  # fmt: skip
        return ((n, m, oh, ow),)
