"""ConvInteger: its shape and dtype rule (registered into :mod:`stack.compiler.shape_rules`'
registry on import); spatial_rules, where Conv's is, is near its 300 lines.

x [N, C, H, W] and w [M, C/group, kH, kW] are int8 or uint8, each its own; the optional
x_zero_point has one element of x's dtype, the optional w_zero_point one element or M (one per
output channel) of w's dtype. Strides and dilations are 2 values of at least 1, pads 4 (top,
left, bottom, right) of at least 0, group at least 1: the importer has resolved auto_pad and
promoted a 1-D convolution to 2-D. The result is int32 [N, M, oH, oW], the window's output
size :func:`~stack.compiler.shape_rules.conv_out`. Like Conv, the op is not folded: the device
convolves.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from stack.compiler.ir import ElemType, Node, OpType, TensorType
from stack.compiler.shape_rules import _fail, _need, conv_out, register

#: The element types ConvInteger's x and w (and their zero points) may have.
QUANT_TYPES = (ElemType.I8, ElemType.U8)


@register(OpType.CONV_INTEGER)
def _conv_integer(node: Node, t: Sequence[TensorType | None], c: Mapping[str, np.ndarray]) -> list:
    x, w = _need(node, t, 0), _need(node, t, 1)
    x_zp, w_zp = (t[i] if len(t) > i and node.input(i) else None for i in (2, 3))
    if x.dtype not in QUANT_TYPES or w.dtype not in QUANT_TYPES:
        raise _fail(node, f"x {x} and w {w} must be int8 or uint8")
    if len(x.shape) != 4 or len(w.shape) != 4:
        raise _fail(node, f"ConvInteger needs 4-D x and w, got {x} and {w}")
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
    for what, zp, of, counts in (("x_zero_point", x_zp, x, (1,)),
                                 ("w_zero_point", w_zp, w, (1, m))):  # fmt: skip
        if zp is not None and (zp.dtype != of.dtype or math.prod(zp.shape) not in counts):
            raise _fail(node, f"{what} {zp} must be {of.dtype.value} of "
                        f"{' or '.join(map(str, sorted(set(counts))))} element(s)")  # fmt: skip
    hw = tuple(conv_out(x.shape[2 + i], w.shape[2 + i], s[i], p[i], p[i + 2], d[i], 0)
               for i in range(2))  # fmt: skip
    if min(hw) < 1:
        raise _fail(node, f"w {list(w.shape)}'s kernel is larger than x {x} with pads {list(p)}")
    return [TensorType(ElemType.I32, (n, m, *hw))]
