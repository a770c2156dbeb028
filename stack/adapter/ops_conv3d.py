"""3-D ConvTranspose as two 2-D ConvTransposes on views (the kernels are 2-D NCHW).

With depth folded into the batch, one 2-D ConvTranspose over (H, W) produces, for every depth
tap k of the kernel, its contribution as extra output channels (W transposed to
(C, kd·M/g, kh, kw)). A second 2-D ConvTranspose over (D, M·H'·W') with a constant one-hot
kernel — tap k has a 1 at depth k·dd — takes the taps as input channels, so it scatters each
input depth to its output depths at stride sd and sums the taps; its pads are the depth pads
the importer resolved (negative end pads extend with zeros). The bias is added last.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from stack.adapter.context import ImportContext
from stack.adapter.ops_composite import EmitChain
from stack.compiler import OpType, ShapeInferenceError, TensorType

Seq = Sequence[int]


def conv_transpose_3d(
    ctx: ImportContext,
    name: str,
    ins: Sequence[str],
    out: str,
    begin: Seq,
    end: Seq,
    strides: Seq,
    dilations: Seq,
    group: int,
) -> None:
    """Emit ``out`` = ConvTranspose(X, W[, B]) for 5-D X and W with the resolved pads
    ``begin``/``end`` per spatial axis (D, H, W). Channels, groups, dtypes, the bias and the
    output size are checked here: ShapeInferenceError naming the node."""
    c = EmitChain(ctx, name)
    x, w = ins[0], ins[1]
    xt, wt = ctx.type_of(x), ctx.type_of(w)
    n, ch, d, h, wd = xt.shape
    wc, per, kd, kh, kw = wt.shape
    m = per * group
    bias = ctx.type_of(ins[2]) if len(ins) > 2 else None
    sizes = [
        s * (i - 1) + dl * (k - 1) + 1 - b - e
        for i, k, s, dl, b, e in zip(
            (d, h, wd), (kd, kh, kw), strides, dilations, begin, end, strict=True
        )
    ]
    problem = _problem(xt, wt, bias, group, sizes)
    if problem is not None:
        raise ShapeInferenceError(f"ConvTranspose: {problem}", op="ConvTranspose", node=name)
    folded = c.op(OpType.RESHAPE, [c.op(OpType.TRANSPOSE, [x], perm=[0, 2, 1, 3, 4])],
                  shape=(n * d, ch, h, wd))  # fmt: skip
    taps_w = c.op(OpType.RESHAPE, [c.op(OpType.TRANSPOSE, [w], perm=[0, 2, 1, 3, 4])],
                  shape=(wc, kd * per, kh, kw))  # fmt: skip
    plane = c.op(
        OpType.CONV_TRANSPOSE,
        [folded, taps_w],
        group=group,
        strides=list(strides[1:]),
        pads=[begin[1], begin[2], end[1], end[2]],
        dilations=list(dilations[1:]),
    )
    ho, wo = ctx.type_of(plane).shape[2:]
    split = c.op(OpType.RESHAPE, [plane], shape=(n, d, group, kd, per, ho * wo))
    taps = c.op(OpType.TRANSPOSE, [split], perm=[0, 3, 1, 2, 4, 5])
    by_tap = c.op(OpType.RESHAPE, [taps], shape=(n, kd, d, m * ho * wo))
    span = (kd - 1) * dilations[0] + 1
    onehot = np.zeros((kd, 1, span, 1), ctx.type_of(x).dtype.numpy)
    onehot[np.arange(kd), 0, np.arange(kd) * dilations[0], 0] = 1
    deep = c.op(
        OpType.CONV_TRANSPOSE,
        [by_tap, c.const(onehot)],
        group=1,
        strides=[strides[0], 1],
        pads=[begin[0], 0, end[0], 0],
        dilations=[1, 1],
    )
    do = ctx.type_of(deep).shape[2]
    back = c.op(OpType.RESHAPE, [deep], shape=(n, do, m, ho, wo))
    if len(ins) < 3:
        c.op(OpType.TRANSPOSE, [back], out, perm=[0, 2, 1, 3, 4])
        return
    y = c.op(OpType.TRANSPOSE, [back], perm=[0, 2, 1, 3, 4])
    c.op(OpType.ADD, [y, c.op(OpType.RESHAPE, [ins[2]], shape=(m, 1, 1, 1))], out)


def _problem(
    xt: TensorType, wt: TensorType, bias: TensorType | None, group: int, sizes: Seq
) -> str | None:
    """What makes X, W, the bias or the output sizes unusable (None: nothing)."""
    ch, wc, m = xt.shape[1], wt.shape[0], wt.shape[1] * group
    if xt.dtype != wt.dtype:
        return f"X is {xt.dtype.value} but W is {wt.dtype.value}"
    if group < 1 or ch != wc or ch % group:
        return f"X has {ch} channels, W {wt} expects {wc} in {group} groups"
    if bias is not None and bias.shape != (m,):
        return f"the bias {bias} must be ({m},)"
    if min(sizes) < 1:
        return f"the pads leave an output of {list(sizes)}"
    return None
