"""The deformable convolution: DEFORM_CONV (an NCHW kernel; ``strides``, ``pads`` — top, left,
bottom, right —, ``dilations``, ``group`` and ``offset_group``).

Inputs X [N, C, H, W], W [oC, C/group, kH, kW], offset [N, offset_group·kH·kW·2, oH, oW] and
the optional B [oC] and mask [N, offset_group·kH·kW, oH, oW], in ONNX's order (a mask needs a
bias before it: a zero one); Y [N, oC, oH, oW] of X's dtype, oH and oW the convolution's. X,
offset, mask and Y are activations: 4-D NHWC ones are converted around the kernel, as CONV2D's.
"""

from __future__ import annotations

from stack.kmd.kernels.ids import KernelId
from stack.umd.errors import ShapeError
from stack.umd.ops import Layout, OpKind, OpRequest
from stack.umd.plan import KernelCall, Semantic
from stack.umd.registry import OpTranslator
from stack.umd.templates import TemplateRegistry
from stack.umd.translators._common import (
    Builder,
    check_dtype,
    need_counts,
    same_dtype,
    window_attrs,
)

#: The inputs that are activations (channels on axis 1), by position: X, offset, mask.
_ACTIVATIONS = (0, 2, 4)


class DeformConvTranslator(OpTranslator):
    """DEFORM_CONV → the NCHW kernel; converts NHWC activations around it."""

    family = "deform_conv"
    ops = frozenset({OpKind.DEFORM_CONV})

    def parse(self, req: OpRequest, templates: TemplateRegistry) -> Semantic:
        need_counts(req, (3, 5))
        same_dtype(req, (0, 1, 2, 3, 4))
        x = req.inputs[0]
        check_dtype(templates, KernelId.DEFORM_CONV, x.dtype, "inputs[0].dtype")
        same_dtype(req, (0,), "outputs")
        kattrs = window_attrs(req.attr_map(), "group", "offset_group")
        b = Builder(req)
        ins = tuple(
            b.input(i, Layout.NCHW if i in _ACTIVATIONS else Layout.ANY)
            for i in range(len(req.inputs))
        )
        call = KernelCall(KernelId.DEFORM_CONV, (*ins, b.output(0, Layout.NCHW)), len(ins), kattrs)
        return b.build(call)

    def infer(self, call: KernelCall) -> tuple[tuple[int, ...], ...]:
        x, w = call.ins[0].shape, call.ins[1].shape
        if len(x) != 4 or len(w) != 4:
            raise ShapeError(f"X and W must be 4-D NCHW, got {x} and {w}", field="inputs[0].shape")
        n, c, h, wd = x
        m, cg, kh, kw = w
        i = call.i
        g, og = i("group"), i("offset_group")
        if cg * g != c or m % g:
            raise ShapeError(f"weights {w} do not fit input channels {c} with group {g}",
                             field="inputs[1].shape")  # fmt: skip
        if c % og:
            raise ShapeError(f"{c} input channels do not split into {og} offset groups",
                             field="attrs.offset_group")  # fmt: skip
        span_h = h + i("pad_top") + i("pad_bottom") - i("dilation_h") * (kh - 1) - 1
        span_w = wd + i("pad_left") + i("pad_right") - i("dilation_w") * (kw - 1) - 1
        if min(span_h, span_w) < 0:
            raise ShapeError(f"kernel {kh}x{kw} larger than the padded input {x}",
                             field="inputs[1].shape")  # fmt: skip
        oh, ow = span_h // i("stride_h") + 1, span_w // i("stride_w") + 1
        k = og * kh * kw
        for at, name, want in ((2, "offset", (n, 2 * k, oh, ow)), (3, "bias", (m,)),
                               (4, "mask", (n, k, oh, ow))):  # fmt: skip
            if len(call.ins) > at and call.ins[at].shape != want:
                raise ShapeError(f"{name} must be {want}, got {call.ins[at].shape}",
                                 field=f"inputs[{at}].shape")  # fmt: skip
        return ((n, m, oh, ow),)
