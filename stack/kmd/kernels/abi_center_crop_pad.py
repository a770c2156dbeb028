"""CENTER_CROP_PAD's ABI, registered into :data:`stack.kmd.kernels.abi.ABIS` when that module is
imported (abi.py is at its 300 lines); the conventions are :mod:`stack.kmd.kernels.abi`'s.

The target sizes are Y's shape (one per axis of X), so the kernel takes no immediates: where
Y is shorter X is cropped from ``(in - out) // 2``, where it is longer X is placed at
``(out - in) // 2`` in zeros."""

from __future__ import annotations

from stack.kmd.kernels.abi import KernelAbi, register
from stack.kmd.kernels.ids import KernelId

register(
    KernelAbi(
        KernelId.CENTER_CROP_PAD, ("X",), ("Y",),
        doc="ONNX CenterCropPad: Y = X cropped or zero-padded about its centre to Y's shape "
        "(X's rank and dtype): per axis X[(in - out) // 2:][:out] where Y is shorter, X at "
        "(out - in) // 2 in zeros where it is longer.",
    )
)  # fmt: skip
