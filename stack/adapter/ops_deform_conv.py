"""The importer of DeformConv (opset 19+), the convolution whose kernel taps sample X at places
moved by a run-time offset; in a module of its own beside :mod:`stack.adapter.ops_nn`, whose
Conv it follows (ops_nn would pass its 300 lines).

The kernel is 2-D NCHW, as ONNX's reference: another spatial rank is refused with a typed
error. The IR ``DeformConv`` keeps ONNX's inputs (X, W, offset, then the optional B and mask)
and attributes but kernel_shape, which must be W's; a mask without a bias takes a zero bias,
the kernel's optional inputs being a trailing run.
"""

from __future__ import annotations

import numpy as np
import onnx

from stack.adapter.context import ImportContext, attributes
from stack.adapter.errors import ModelFormatError
from stack.adapter.ops_nn import SPATIAL_LAYERS, _ints
from stack.adapter.registry import register
from stack.compiler import OpType, conv_out


@register("DeformConv")
def deform_conv(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """Y = conv(X sampled bilinearly at each tap's place plus its offset, times its mask, W) + B
    (opset 19+): the IR ``DeformConv``."""

    def bad(why: str) -> ModelFormatError:
        return ModelFormatError(f"DeformConv {why}", op="DeformConv", node=name)

    ins = list(proto.input)
    if ctx.opset < 19 or not 3 <= len(ins) <= 5 or not all(ins[:3]):
        raise bad(f"(opset 19+, model opset {ctx.opset}) takes X, W, offset and the optional B "
                  f"and mask, got {ins}")  # fmt: skip
    xt, wt, ot = (ctx.type_of(v) for v in ins[:3])
    opt = [ctx.type_of(v) if v else None for v in (*ins[3:], "", "")[:2]]
    if not xt.dtype.is_float or any(v is not None and v.dtype != xt.dtype
                                    for v in (wt, ot, *opt)):  # fmt: skip
        raise bad(f"X, W, offset, B and mask must be one float dtype, X is {xt.dtype.value}")
    if len(xt.shape) < 3:
        raise bad(f"X {list(xt.shape)} needs N, C and a spatial axis")
    if len(xt.shape) != 4:
        raise ctx.unsupported(proto, name, f"{len(xt.shape) - 2}-D DeformConv: the kernel is 2-D "
                              "(NCHW)", layers=SPATIAL_LAYERS)  # fmt: skip
    a = attributes(proto)
    group, og = int(a.get("group", 1)), int(a.get("offset_group", 1))
    if len(wt.shape) != 4 or group < 1 or og < 1:
        raise bad(f"W {list(wt.shape)} must be 4-D, group {group} and offset_group {og} >= 1")
    (n, c), (m, cg, kh, kw) = xt.shape[:2], wt.shape
    if list(a.get("kernel_shape", (kh, kw))) != [kh, kw]:
        raise bad(f"kernel_shape {list(a['kernel_shape'])} differs from W {list(wt.shape)}")
    if c != cg * group or m % group or c % og:
        raise bad(f"X's {c} channels, W {list(wt.shape)} and group {group} disagree, or "
                  f"offset_group {og} does not divide the channels")  # fmt: skip
    strides, dil = (_ints(proto, name, k, 2, 1, 1) for k in ("strides", "dilations"))
    pads = _ints(proto, name, "pads", 4, 0, 0)
    hw = [conv_out(xt.shape[2 + i], wt.shape[2 + i], strides[i], pads[i], pads[i + 2], dil[i], 0)
          for i in range(2)]  # fmt: skip
    if min(hw) < 1:
        raise bad(f"W {list(wt.shape)}'s kernel is larger than X {list(xt.shape)} with pads {pads}")
    k = og * kh * kw
    for what, t, want in (("offset", ot, (n, 2 * k, *hw)), ("B", opt[0], (m,)),
                          ("mask", opt[1], (n, k, *hw))):  # fmt: skip
        if t is not None and t.shape != want:
            raise bad(f"{what} {list(t.shape)} must be {list(want)}")
    inputs = [i for i in ins if i]
    if opt[1] is not None and opt[0] is None:  # the mask needs a bias before it: a zero one
        zero = ctx.add_const(ctx.fresh(f"{name}.bias"), np.zeros(m, xt.dtype.numpy))
        inputs.insert(3, zero)
    ctx.emit(name, OpType.DEFORM_CONV, inputs, [proto.output[0]], strides=strides, pads=pads,
             dilations=dil, group=group, offset_group=og)  # fmt: skip
