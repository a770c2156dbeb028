"""The CuPy backend: device memory in GPU global memory, kernels on the GPU.

CuPy is imported only when this backend is instantiated (never at module import), so the
rest of the stack runs without it. Kernels: the generic library bound to ``cupy`` (matrix
products through cuBLAS via ``cupy.matmul``), with hand kernels from
:mod:`stack.kmd.kernels.cupy_kernels` where a fused or specialised kernel pays.
"""

from __future__ import annotations

import functools
import importlib
import math
from typing import Any

import numpy as np

from stack.kmd.kernels import registry
from stack.kmd.kernels.numpy_backend import GENERIC

NAME = "cupy"


@functools.cache
def cupy_module() -> Any:
    """The ``cupy`` module (imported on first use)."""
    return importlib.import_module("cupy")


class CupyBackend(registry.KernelBackend):
    """GPU memory and kernels through CuPy."""

    name = NAME

    def __init__(self) -> None:
        self.cp = cupy_module()
        _bind_kernels(self.cp)

    def alloc(self, nbytes: int) -> Any:
        return self.cp.zeros(nbytes, dtype=self.cp.uint8)

    def view(
        self, storage: Any, offset: int, nbytes: int, shape: tuple[int, ...], dtype: Any
    ) -> Any:
        return storage[offset : offset + nbytes].view(dtype).reshape(shape)

    def upload(self, storage: Any, offset: int, data: memoryview) -> None:
        storage[offset : offset + data.nbytes].set(np.frombuffer(data, dtype=np.uint8))

    def download(self, storage: Any, offset: int, nbytes: int) -> bytes:
        return bytes(storage[offset : offset + nbytes].get().tobytes())

    def to_host(self, storage: Any, offset: int, shape: tuple[int, ...], dtype: Any) -> Any:
        nbytes = math.prod(shape) * dtype.itemsize
        return self.view(storage, offset, nbytes, shape, dtype).get()

    def synchronize(self) -> None:
        self.cp.cuda.runtime.deviceSynchronize()

    def memory_limit(self) -> int:
        free, total = self.cp.cuda.runtime.memGetInfo()
        return int(min(free, total) * 0.9)


@functools.cache
def _bind_kernels(cp: Any) -> None:
    from stack.kmd.kernels import cupy_kernels

    for module in GENERIC:
        for kid, fn in module.TABLE.items():
            registry.register(NAME, kid)(functools.partial(fn, cp))
    for kid, fn in cupy_kernels.TABLE.items():
        registry.register(NAME, kid)(functools.partial(fn, cp))


def install() -> None:
    """Register the backend (its kernels are bound when it is first instantiated)."""
    registry.register_backend(NAME, CupyBackend, registry.cupy_unusable)
