"""The NumPy backend: the null device. Host memory, every kernel of the library, no GPU.

Backing storage is one zero-filled ``uint8`` array per allocation; kernels see typed views of
it (no copies on the hot path) and are the generic kernels bound to ``numpy``, except those in
``SPECIFIC`` (Conv2D: :mod:`stack.kmd.kernels.conv_np`; GEMM and MatMul, tiled over Y's rows:
:mod:`stack.kmd.kernels.linalg_np`; LayerNorm and Softmax with row sums as BLAS products:
:mod:`stack.kmd.kernels.norm_np`). The launches of a few kernels are prepared when a command
buffer records them (:mod:`stack.kmd.kernels.prepared_np`).
"""

from __future__ import annotations

import functools
import math
import os
from typing import Any

import numpy as np

from stack.kmd.kernels import (
    affine_grid,
    attention,
    binary,
    bitcast,
    blas,
    causal_conv_with_state,
    center_crop_pad,
    col2im,
    conv,
    conv_integer,
    conv_nhwc,
    conv_np,
    conv_transpose,
    data,
    deform_conv,
    det,
    dft,
    einsum,
    elementwise,
    grid_sample,
    gru,
    ids,
    index,
    layout,
    linalg,
    linalg_np,
    linear_attention,
    lstm,
    negative_log_likelihood_loss,
    norm,
    norm_np,
    pool,
    prepared_np,
    quant,
    reduce,
    registry,
    rnn,
    rotary_embedding,
    softmax_cross_entropy_loss,
    swiglu,
    tensor_scatter,
    unary,
)

NAME = "numpy"
#: Default device memory budget of the null device (override: $REFSTACK_KMD_MEMORY_BYTES).
DEFAULT_LIMIT = 16 << 30
GENERIC = (
    linalg,
    det,
    einsum,
    conv,
    conv_integer,
    conv_transpose,
    col2im,
    deform_conv,
    causal_conv_with_state,
    rnn,
    gru,
    lstm,
    dft,
    attention,
    linear_attention,
    pool,
    norm,
    elementwise,
    quant,
    data,
    unary,
    binary,
    reduce,
    index,
    negative_log_likelihood_loss,
    softmax_cross_entropy_loss,
    rotary_embedding,
    swiglu,
    bitcast,
    center_crop_pad,
    grid_sample,
    affine_grid,
    tensor_scatter,
)
#: NumPy-specific kernels replacing generic ones (planned, with per-thread scratch).
SPECIFIC = {ids.KernelId.CONV2D: conv_np.conv2d, **linalg_np.TABLE, **norm_np.TABLE}
#: Kernels whose untiled launches a command buffer prepares at record time.
PREPARED = {
    ids.KernelId.GEMM: prepared_np.gemm,
    ids.KernelId.MATMUL: prepared_np.matmul,
    ids.KernelId.LAYERNORM: prepared_np.layernorm,
    ids.KernelId.SOFTMAX: prepared_np.softmax,
    ids.KernelId.TRANSPOSE: prepared_np.transpose,
    ids.KernelId.ADD: prepared_np.add,
    ids.KernelId.MUL: prepared_np.mul,
    ids.KernelId.RELU: prepared_np.relu,
    ids.KernelId.CONV2D: conv_nhwc.conv2d,
    ids.KernelId.GLOBALAVGPOOL: prepared_np.globalavgpool,
}

#: Preparers that also take tiled launches (oneDNN's convolutions run on OpenMP threads).
TILED = frozenset({ids.KernelId.CONV2D})
#: Inputs a preparer copies at record time: oneDNN's convolutions pack W and keep B.
KEPT = {ids.KernelId.CONV2D: (1, 2)}


class NumpyBackend(registry.KernelBackend):
    """Host memory as device memory."""

    name = NAME

    def __init__(self) -> None:
        self.blas_threads = blas.configure()

    def alloc(self, nbytes: int) -> Any:
        return np.zeros(nbytes, dtype=np.uint8)

    def view(
        self, storage: Any, offset: int, nbytes: int, shape: tuple[int, ...], dtype: Any
    ) -> Any:
        return storage[offset : offset + nbytes].view(dtype).reshape(shape)

    def upload(self, storage: Any, offset: int, data: memoryview) -> None:
        storage[offset : offset + data.nbytes] = np.frombuffer(data, dtype=np.uint8)

    def download(self, storage: Any, offset: int, nbytes: int) -> bytes:
        return storage[offset : offset + nbytes].tobytes()

    def to_host(self, storage: Any, offset: int, shape: tuple[int, ...], dtype: Any) -> Any:
        nbytes = math.prod(shape) * dtype.itemsize
        return self.view(storage, offset, nbytes, shape, dtype).copy()

    def host_view(self, storage: Any) -> Any:
        return storage

    def memory_limit(self) -> int:
        return int(os.environ.get("REFSTACK_KMD_MEMORY_BYTES", DEFAULT_LIMIT))


def install() -> None:
    """Register the backend and bind every generic kernel to NumPy."""
    registry.register_backend(NAME, NumpyBackend, lambda: None)
    for module in GENERIC:
        for kid, fn in module.TABLE.items():
            registry.register(NAME, kid)(functools.partial(fn, np))
    for kid, specific in SPECIFIC.items():
        registry.register(NAME, kid)(specific)
    for kid in layout.ACTIVATIONS:  # NHWC launches: the NCHW kernel on transposed copies
        registry.register(NAME, kid)(layout.nhwc_aware(kid, registry.kernel(NAME, kid), np))
    for kid, prepare in PREPARED.items():
        registry.register_preparer(
            registry.kernel(NAME, kid), prepare, tiled=kid in TILED, kept=KEPT.get(kid, ())
        )
