"""The transposed convolution: CONV_TRANSPOSE (an NCHW kernel).

NHWC activations are converted around the kernel as for the convolution family. Pads may be
negative (the output then extends the kernel's uncropped result with zeros); strides,
dilations and the group must be positive, the weights ``[C, M/group, kH, kW]``.
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
    attr_int,
    attr_ints,
    check_dtype,
    need_counts,
    same_dtype,
    window_immediates,
)


def _attrs(attrs: dict) -> dict[str, int]:
    strides = attr_ints(attrs, "strides", 2, (1, 1))
    pads = attr_ints(attrs, "pads", 4, (0, 0, 0, 0))
    dil = attr_ints(attrs, "dilations", 2, (1, 1))
    group = attr_int(attrs, "group", 1)
    for name, values in (("strides", strides), ("dilations", dil), ("group", (group,))):
        if min(values) < 1:
            raise ShapeError(f"{name} must be >= 1, got {values}", field=f"attrs.{name}")
    return {**window_immediates(strides, pads, dil), "group": group}


class ConvTransposeTranslator(OpTranslator):
    """CONV_TRANSPOSE → the NCHW kernel; converts NHWC activations around it."""

    family = "conv_transpose"
    ops = frozenset({OpKind.CONV_TRANSPOSE})

    def parse(self, req: OpRequest, templates: TemplateRegistry) -> Semantic:
        need_counts(req, (2, 3))
        same_dtype(req, (0, 1, 2))
        check_dtype(templates, KernelId.CONV_TRANSPOSE, req.inputs[0].dtype, "inputs[0].dtype")
        b = Builder(req)
        x = b.input(0, Layout.NCHW)
        rest = tuple(b.input(i) for i in range(1, len(req.inputs)))
        out = b.output(0, Layout.NCHW)
        call = KernelCall(
            KernelId.CONV_TRANSPOSE, (x, *rest, out), 1 + len(rest), _attrs(req.attr_map())
        )
        return b.build(call)

    def infer(self, call: KernelCall) -> tuple[tuple[int, ...], ...]:
        x, w = call.ins[0].shape, call.ins[1].shape
        if len(x) != 4 or len(w) != 4:
            raise ShapeError(f"X and W must be 4-D NCHW, got {x} and {w}", field="inputs[0].shape")
        n, c, h, wd = x
        g = call.i("group")
        if w[0] != c or c % g:
            raise ShapeError(
                f"weights {w} do not fit input channels {c} with group {g}",
                field="inputs[1].shape",
            )
        m = w[1] * g
        if len(call.ins) > 2 and call.ins[2].shape != (m,):
            raise ShapeError(f"bias must be ({m},)", field="inputs[2].shape")
        i = call.i
        oh = i("stride_h") * (h - 1) + i("dilation_h") * (w[2] - 1) + 1
        ow = i("stride_w") * (wd - 1) + i("dilation_w") * (w[3] - 1) + 1
        oh -= i("pad_top") + i("pad_bottom")
        ow -= i("pad_left") + i("pad_right")
        if oh < 1 or ow < 1:
            raise ShapeError(f"pads leave an empty output {oh}x{ow}", field="attrs.pads")
        return ((n, m, oh, ow),)
