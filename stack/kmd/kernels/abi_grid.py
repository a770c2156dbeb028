"""The grid kernels' ABIs (GridSample's sampling at a grid of places, AffineGrid's making of
one), registered into :data:`stack.kmd.kernels.abi.ABIS` when that module is imported; the
conventions are :mod:`stack.kmd.kernels.abi`'s."""

from __future__ import annotations

from stack.kmd.kernels.abi import Imm, KernelAbi, register
from stack.kmd.kernels.ids import KernelId

for _abi in (
    KernelAbi(
        KernelId.GRID_SAMPLE, ("X", "grid"), ("Y",),
        ints=(
            Imm("mode", 0, "GridSampleMode: 0 linear, 1 nearest, 2 cubic"),
            Imm("padding_mode", 0, "GridSamplePadding: 0 zeros, 1 border, 2 reflection"),
            Imm("align_corners", 0),
        ),
        doc="ONNX GridSample: Y[N,C,*O] = X[N,C] interpolated at grid[N,*O,r] (normalised, the "
        "last spatial axis first), any spatial rank r.",
    ),
    KernelAbi(
        KernelId.AFFINE_GRID, ("theta",), ("grid",), ints=(Imm("align_corners", 0),),
        doc="ONNX AffineGrid: grid[N,*S,r] = theta[N,r,r+1] applied to the homogeneous normalised "
        "places of S's pixels (x, the last spatial axis, first), r 2 or 3.",
    ),
):  # fmt: skip
    register(_abi)
