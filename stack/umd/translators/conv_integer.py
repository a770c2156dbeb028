"""The integer convolution: CONV_INTEGER (ONNX ConvInteger; an NCHW kernel; ``strides``,
``pads`` — top, left, bottom, right —, ``dilations`` and ``group``, as DEFORM_CONV's).

Inputs x [N, C, H, W] and w [M, C/group, kH, kW], each I8 or U8, and the optional
x_zero_point (one element, x's dtype) and w_zero_point (one element or M, w's dtype), in
ONNX's order (a w_zero_point needs an x_zero_point before it: a zero one); y [N, M, oH, oW]
I32, oH and oW the convolution's. x and y are activations: 4-D NHWC ones are converted around
the kernel, as CONV2D's; w and the zero points are taken as they are. The window's attributes
are read by :func:`~stack.umd.translators._common.window_attrs`, its shapes by
:func:`integer_conv_shape`, which QLINEARCONV's translator
(:mod:`stack.umd.translators.qlinear_conv`) shares.
"""

from __future__ import annotations

import math

from stack.kmd.dtypes import DType
from stack.kmd.kernels.ids import KernelId
from stack.umd.errors import ShapeError, UnsupportedDtypeError
from stack.umd.ops import OpKind, OpRequest
from stack.umd.plan import KernelCall, Semantic
from stack.umd.registry import OpTranslator
from stack.umd.templates import TemplateRegistry
from stack.umd.translators._common import check_dtype, nchw_call, need_counts, window_attrs


def _check_dtypes(req: OpRequest, templates: TemplateRegistry) -> None:
    """x and w I8/U8 (the template's), each zero point of its tensor's dtype, y I32."""
    kernel = KernelId.CONV_INTEGER
    for i in (0, 1):
        check_dtype(templates, kernel, req.inputs[i].dtype, f"inputs[{i}].dtype")
    for i, of in ((2, 0), (3, 1)):
        if i < len(req.inputs) and req.inputs[i].dtype is not req.inputs[of].dtype:
            raise UnsupportedDtypeError(
                f"inputs[{i}] (a zero point) is {req.inputs[i].dtype.name}, expected "
                f"inputs[{of}]'s {req.inputs[of].dtype.name}",
                field=f"inputs[{i}].dtype",
            )
    if req.outputs[0].dtype is not DType.I32:
        raise UnsupportedDtypeError(
            f"CONV_INTEGER writes I32, not {req.outputs[0].dtype.name}", field="outputs[0].dtype"
        )


class ConvIntegerTranslator(OpTranslator):
    """CONV_INTEGER → the NCHW kernel; converts NHWC activations around it."""

    family = "conv_integer"
    ops = frozenset({OpKind.CONV_INTEGER})

    def parse(self, req: OpRequest, templates: TemplateRegistry) -> Semantic:
        need_counts(req, (2, 4))
        _check_dtypes(req, templates)
        return nchw_call(req, KernelId.CONV_INTEGER, window_attrs(req.attr_map(), "group"))

    def infer(self, call: KernelCall) -> tuple[tuple[int, ...], ...]:
        n, m, oh, ow = integer_conv_shape(call, 1)
        per_channel = (1,) if m == 1 else (1, m)  # w's zero point per tensor or per channel
        for at, name, allowed in ((2, "x_zero_point", (1,)), (3, "w_zero_point", per_channel)):
            check_elements(call, at, name, allowed)
        return ((n, m, oh, ow),)


def integer_conv_shape(call: KernelCall, w_at: int) -> tuple[int, int, int, int]:
    """(N, M, oH, oW) of the convolution of x (input 0) by w (input ``w_at``): x 4-D NCHW and
    w 4-D [M, C/group, kH, kW], else a ShapeError on that input; channels that do not split into
    the groups, or a kernel larger than the padded x, a ShapeError on w."""
    x, w = call.ins[0].shape, call.ins[w_at].shape
    w_field = f"inputs[{w_at}].shape"
    if len(x) != 4:
        raise ShapeError(f"x must be 4-D NCHW, got {x}", field="inputs[0].shape")
    if len(w) != 4:
        raise ShapeError(f"w must be 4-D [M, C/group, kH, kW], got {w}", field=w_field)
    n, c, h, wd = x
    m, cg, kh, kw = w
    i = call.i
    g = i("group")
    if cg * g != c or m % g:
        raise ShapeError(f"weights {w} do not fit input channels {c} with group {g}",
                         field=w_field)  # fmt: skip
    span_h = h + i("pad_top") + i("pad_bottom") - i("dilation_h") * (kh - 1) - 1
    span_w = wd + i("pad_left") + i("pad_right") - i("dilation_w") * (kw - 1) - 1
    if min(span_h, span_w) < 0:
        raise ShapeError(f"kernel {kh}x{kw} larger than the padded input {x}", field=w_field)
    return n, m, span_h // i("stride_h") + 1, span_w // i("stride_w") + 1


def check_elements(call: KernelCall, at: int, name: str, allowed: tuple[int, ...]) -> None:
    """Input ``at`` (``name``), when present, has one of the ``allowed`` element counts, else a
    ShapeError on its shape."""
    if len(call.ins) > at and math.prod(call.ins[at].shape) not in allowed:
        counts = " or ".join(map(str, allowed))
        raise ShapeError(f"{name} must have {counts} element(s), got shape "
                         f"{call.ins[at].shape}", field=f"inputs[{at}].shape")  # fmt: skip
