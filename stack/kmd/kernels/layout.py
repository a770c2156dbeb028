"""The activation layout of the convolution family's kernels: their ``layout`` immediate.

CONV2D, MAXPOOL, AVGPOOL and GLOBALAVGPOOL take an int immediate ``layout`` (last in their ABI,
default 0): 0 (:attr:`KernelLayout.NCHW`) means their activations (X and Y; CONV2D's residual R
too) are ``[N, C, H, W]``, 1 (:attr:`KernelLayout.NHWC`) that they are ``[N, H, W, C]`` in
memory and in their descriptors' shapes. Weights (CONV2D's W, OIHW or Winograd U) and bias are
the same in both.

Every backend honours the immediate: :func:`nhwc_aware` wraps a backend's NCHW kernel so that an
NHWC launch runs it on NCHW copies of its activations and writes the result back in NHWC
(correct everywhere, whatever its speed); the fast paths (oneDNN's NHWC convolutions, the NumPy
1x1 GEMM, the NHWC global average pool: :mod:`stack.kmd.kernels.conv_nhwc`,
:mod:`stack.kmd.kernels.prepared_np`) are preparers that read the activations where they are.
"""

from __future__ import annotations

import enum
from typing import Any

from stack.kmd.kernels.abi import abi_of
from stack.kmd.kernels.ids import KernelId
from stack.kmd.kernels.registry import KernelFn

#: NHWC -> NCHW and NCHW -> NHWC axis permutations of a 4-D activation.
TO_NCHW = (0, 3, 1, 2)
TO_NHWC = (0, 2, 3, 1)


class KernelLayout(enum.IntEnum):
    """Values of the ``layout`` immediate."""

    NCHW = 0
    NHWC = 1


#: The kernels that take a ``layout`` immediate -> the positions of their activation inputs.
ACTIVATIONS: dict[KernelId, tuple[int, ...]] = {
    KernelId.CONV2D: (0, 3),
    KernelId.MAXPOOL: (0,),
    KernelId.AVGPOOL: (0,),
    KernelId.GLOBALAVGPOOL: (0,),
}


def layout_index(kernel_id: KernelId) -> int:
    """The position of ``layout`` among the kernel's int immediates."""
    return [imm.name for imm in abi_of(kernel_id).ints].index("layout")


def layout_of(kernel_id: KernelId, ints: tuple[int, ...]) -> KernelLayout:
    """The launch's layout (NCHW when the immediate is absent)."""
    at = layout_index(kernel_id)
    return KernelLayout(ints[at]) if len(ints) > at else KernelLayout.NCHW


def nchw_shape(shape: tuple[int, ...]) -> tuple[int, ...]:
    """The NCHW shape of an NHWC ``shape``."""
    return tuple(shape[p] for p in TO_NCHW)


def nhwc_aware(kernel_id: KernelId, fn: KernelFn, xp: Any) -> KernelFn:
    """``fn`` (an NCHW kernel of array module ``xp``) made to honour ``layout``: an NHWC launch
    runs ``fn`` on contiguous NCHW copies of its activations into NCHW scratch outputs, then
    transposes those into its NHWC outputs."""
    at = layout_index(kernel_id)
    acts = ACTIVATIONS[kernel_id]

    def run(ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]) -> None:
        if len(ints) <= at or ints[at] != KernelLayout.NHWC:
            fn(ins, outs, ints, fl)
            return
        nchw = [
            xp.ascontiguousarray(a.transpose(TO_NCHW)) if i in acts else a
            for i, a in enumerate(ins)
        ]
        tmp = [xp.empty(nchw_shape(y.shape), y.dtype) for y in outs]
        fn(nchw, tmp, (*ints[:at], int(KernelLayout.NCHW), *ints[at + 1 :]), fl)
        for y, t in zip(outs, tmp, strict=True):
            y[...] = t.transpose(TO_NHWC)

    run.__name__ = getattr(fn, "__name__", kernel_id.name.lower())
    run.__doc__ = fn.__doc__
    return run
