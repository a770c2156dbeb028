"""The integer convolutions, ConvInteger and QLinearConv: their shape and dtype rules (registered
into :mod:`stack.compiler.shape_rules`' registry on import); spatial_rules, where Conv's is, is
near its 300 lines.

Both convolve x [N, C, H, W] by w [M, C/group, kH, kW], int8 or uint8 each. Strides and
dilations are 2 values of at least 1, pads 4 (top, left, bottom, right) of at least 0, group at
least 1: the importer has resolved auto_pad and promoted a 1-D convolution to 2-D. ConvInteger's
optional x_zero_point has one element of x's dtype, its optional w_zero_point one element or M
(one per output channel) of w's dtype; its result is int32 [N, M, oH, oW], the window's output
size :func:`~stack.compiler.shape_rules.conv_out`. QLinearConv's inputs are ONNX's, in its
order: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point and the
optional B; the scales float32 (x's and y's one element, w's one or M), the zero points one
element of x's, w's and y's dtypes (w's one or M), B int32 [M]; its result [N, M, oH, oW] of
y_zero_point's int8 or uint8. Like Conv, neither op is folded: the device convolves.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from stack.compiler.ir import ElemType, Node, OpType, TensorType
from stack.compiler.shape_rules import _fail, _need, conv_out, register

#: The element types the integer convolutions' x and w (and their zero points) may have.
QUANT_TYPES = (ElemType.I8, ElemType.U8)


def _window(node: Node, x: TensorType, w: TensorType) -> tuple[int, int, int, int]:
    """(N, M, oH, oW) of x convolved by w with the node's window; ShapeInferenceError naming the
    node for dtypes, ranks, attributes or channels that do not fit."""
    if x.dtype not in QUANT_TYPES or w.dtype not in QUANT_TYPES:
        raise _fail(node, f"x {x} and w {w} must be int8 or uint8")
    if len(x.shape) != 4 or len(w.shape) != 4:
        raise _fail(node, f"{node.op.value} needs 4-D x and w, got {x} and {w}")
    s, d = (tuple(int(v) for v in node.attr(k, (1, 1))) for k in ("strides", "dilations"))
    p = tuple(int(v) for v in node.attr("pads", (0, 0, 0, 0)))
    group = int(node.attr("group", 1))
    if len(s) != 2 or len(d) != 2 or len(p) != 4 or min(*s, *d, group) < 1 or min(p) < 0:
        raise _fail(node, f"strides {list(s)}, dilations {list(d)} need 2 values >= 1, pads "
                    f"{list(p)} 4 >= 0, group {group} >= 1")  # fmt: skip
    (n, ch), (m, cg) = x.shape[:2], w.shape[:2]
    if ch != cg * group or m % group:
        raise _fail(node, f"x has {ch} channels, w {list(w.shape)} expects {cg}x{group} and {m} "
                    f"outputs in {group} groups")  # fmt: skip
    hw = tuple(conv_out(x.shape[2 + i], w.shape[2 + i], s[i], p[i], p[i + 2], d[i], 0)
               for i in range(2))  # fmt: skip
    if min(hw) < 1:
        raise _fail(node, f"w {list(w.shape)}'s kernel is larger than x {x} with pads {list(p)}")
    return n, m, hw[0], hw[1]


def _check(node: Node, what: str, t: TensorType | None, dtype: ElemType, counts: tuple) -> None:
    """``t`` (input ``what``, when present) is of ``dtype`` with one of the element ``counts``."""
    if t is not None and (t.dtype != dtype or math.prod(t.shape) not in counts):
        raise _fail(node, f"{what} {t} must be {dtype.value} of "
                    f"{' or '.join(map(str, sorted(set(counts))))} element(s)")  # fmt: skip


@register(OpType.CONV_INTEGER)
def _conv_integer(node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]) -> list:
    x, w = _need(node, t, 0), _need(node, t, 1)
    x_zp, w_zp = (t[i] if len(t) > i and node.input(i) else None for i in (2, 3))
    n, m, oh, ow = _window(node, x, w)
    _check(node, "x_zero_point", x_zp, x.dtype, (1,))
    _check(node, "w_zero_point", w_zp, w.dtype, (1, m))
    return [TensorType(ElemType.I32, (n, m, oh, ow))]


@register(OpType.QLINEARCONV)
def _qlinear_conv(node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]) -> list:
    x, x_s, x_zp, w, w_s, w_zp, y_s, y_zp = (_need(node, t, i) for i in range(8))
    b = t[8] if len(t) > 8 and node.input(8) else None
    n, m, oh, ow = _window(node, x, w)
    if y_zp.dtype not in QUANT_TYPES:
        raise _fail(node, f"y_zero_point {y_zp} must be int8 or uint8")
    for what, v, dtype, counts in (
        ("x_scale", x_s, ElemType.F32, (1,)), ("x_zero_point", x_zp, x.dtype, (1,)),
        ("w_scale", w_s, ElemType.F32, (1, m)), ("w_zero_point", w_zp, w.dtype, (1, m)),
        ("y_scale", y_s, ElemType.F32, (1,)), ("y_zero_point", y_zp, y_zp.dtype, (1,)),
    ):  # fmt: skip
        _check(node, what, v, dtype, counts)
    if b is not None and (b.dtype is not ElemType.I32 or b.shape != (m,)):
        raise _fail(node, f"B {b} must be int32 [{m}], one per output channel")
    return [TensorType(y_zp.dtype, (n, m, oh, ow))]
