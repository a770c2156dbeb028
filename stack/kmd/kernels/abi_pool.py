"""The pooling kernels' ABIs (windowed, global, region-of-interest pools and max unpooling),
registered into :data:`stack.kmd.kernels.abi.ABIS` when that module is imported; the
conventions are :mod:`stack.kmd.kernels.abi`'s."""

from __future__ import annotations

from stack.kmd.kernels.abi import Imm, KernelAbi, register
from stack.kmd.kernels.ids import KernelId

_LAYOUT = Imm("layout", 0, "X, Y: 0 NCHW, 1 NHWC (stack.kmd.kernels.layout)")
_POOL_INTS = (
    Imm("kernel_h"), Imm("kernel_w"), Imm("stride_h", 1), Imm("stride_w", 1),
    Imm("pad_top", 0), Imm("pad_left", 0), Imm("pad_bottom", 0), Imm("pad_right", 0),
)  # fmt: skip

for _abi in (
    KernelAbi(
        KernelId.MAXPOOL, ("X",), ("Y",),
        ints=(*_POOL_INTS, Imm("dilation_h", 1), Imm("dilation_w", 1), _LAYOUT),
        doc="NCHW (layout 1: NHWC) max pool; padding is -inf; output size from Y (ceil_mode "
        "pads bottom/right).",
    ),
    KernelAbi(
        KernelId.AVGPOOL, ("X",), ("Y",),
        ints=(*_POOL_INTS, Imm("count_include_pad", 0), Imm("dilation_h", 1), Imm("dilation_w", 1),
              _LAYOUT),
        doc="NCHW (layout 1: NHWC) average pool; output size from Y (ceil_mode windows are "
        "clipped).",
    ),
    KernelAbi(
        KernelId.GLOBALAVGPOOL, ("X",), ("Y",), ints=(_LAYOUT,),
        doc="Mean over H, W: Y[N,C,1,1] (layout 1: X NHWC, Y[N,1,1,C]).",
    ),
    KernelAbi(
        KernelId.GLOBALLPPOOL, ("X",), ("Y",), ints=(Imm("p", 2, "the norm's order, >= 1"),),
        doc="Lp norm over H, W: Y[N,C,1,1] = (sum |X|^p)^(1/p).",
    ),
    KernelAbi(
        KernelId.MAXROIPOOL, ("X", "rois"), ("Y",),
        ints=(Imm("pooled_h"), Imm("pooled_w")), floats=(Imm("spatial_scale", 1.0),),
        doc="ONNX MaxRoiPool: Y[r,C,ph,pw] = max of X[batch_r] over each bin of roi r "
        "(rois[r] = batch, x1, y1, x2, y2 scaled by spatial_scale); an empty bin is 0.",
    ),
    KernelAbi(
        KernelId.ROIALIGN, ("X", "rois", "batch_indices"), ("Y",),
        ints=(
            Imm("output_h", 1), Imm("output_w", 1),
            Imm("sampling_ratio", 0, "samples per bin axis (0: ceil(bin size))"),
            Imm("mode", 0, "RoiAlignMode: 0 avg, 1 max"),
            Imm("half_pixel", 1, "1: coordinates shifted by half a pixel (opset 16)"),
        ),
        floats=(Imm("spatial_scale", 1.0),),
        doc="ONNX RoiAlign: Y[r,C,oh,ow] = the average (max) of the bilinear samples of each "
        "bin of roi r (rois[r] = x1, y1, x2, y2 scaled by spatial_scale) in X[batch_indices[r]].",
    ),
    KernelAbi(
        KernelId.MAXUNPOOL, ("X", "I"), ("Y",),
        doc="ONNX MaxUnpool: Y = zeros with X written at the places I (X's shape) names in Y "
        "flattened; a place named twice takes the last X; output size from Y (N, C as X's).",
    ),
):  # fmt: skip
    register(_abi)
