"""The CuPy backend: device memory in GPU global memory, kernels on the GPU.

CuPy is imported only when this backend is instantiated (never at module import), so the
rest of the stack runs without it. Kernels: the generic library bound to ``cupy`` (matrix
products through cuBLAS via ``cupy.matmul``), with hand kernels from
:mod:`stack.kmd.kernels.cupy_kernels` where a fused or specialised kernel pays.

Overlap: every KMD queue gets a :class:`CudaLane` — its own non-blocking CUDA stream, made
current while the queue's launches are issued — and a command completes when an event recorded
after its launches is reached (the fence is signalled from that event; no device-wide
synchronisation), so queues run concurrently on the GPU. Memory comes from this device's own
CuPy memory pool (one per backend instance, bounded by :meth:`memory_limit`). A sticky CUDA
error (the context is unusable: illegal address, launch failure, ECC, ...) is reported by the
lane as lost; the driver then refuses work until a reset, which succeeds only if the device
synchronises cleanly again.
"""

from __future__ import annotations

import functools
import importlib
import math
from types import TracebackType
from typing import Any

import numpy as np

from stack.kmd.errors import DeviceLostError
from stack.kmd.kernels import layout, registry
from stack.kmd.kernels.lane import Lane
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
        self.device_id = int(self.cp.cuda.runtime.getDevice())
        self.pool = self.cp.cuda.MemoryPool()  # this device's pool, not the process default
        _bind_kernels(self.cp)

    def alloc(self, nbytes: int) -> Any:
        with self.cp.cuda.using_allocator(self.pool.malloc):
            storage = self.cp.zeros(nbytes, dtype=self.cp.uint8)
        # The lanes' streams are non-blocking (no implicit order with the null stream): the
        # zero fill (and every upload below) is complete before a lane may read the memory.
        self.cp.cuda.Stream.null.synchronize()
        return storage

    def lane(self) -> CudaLane:
        return CudaLane(self.cp)

    def view(
        self, storage: Any, offset: int, nbytes: int, shape: tuple[int, ...], dtype: Any
    ) -> Any:
        return storage[offset : offset + nbytes].view(dtype).reshape(shape)

    def upload(self, storage: Any, offset: int, data: memoryview) -> None:
        storage[offset : offset + data.nbytes].set(np.frombuffer(data, dtype=np.uint8))
        self.cp.cuda.Stream.null.synchronize()

    def download(self, storage: Any, offset: int, nbytes: int) -> bytes:
        return bytes(storage[offset : offset + nbytes].get().tobytes())

    def to_host(self, storage: Any, offset: int, shape: tuple[int, ...], dtype: Any) -> Any:
        nbytes = math.prod(shape) * dtype.itemsize
        return self.view(storage, offset, nbytes, shape, dtype).get()

    def synchronize(self) -> None:
        """Device-wide (tools only; queues await their own lane's event)."""
        self.cp.cuda.runtime.deviceSynchronize()

    def memory_limit(self) -> int:
        free, total = self.cp.cuda.runtime.memGetInfo()
        return int(min(free, total) * 0.9)


#: CUDA runtime errors after which the context is unusable (sticky): illegal address, launch
#: failure or timeout, hardware stack error, illegal instruction, misaligned or invalid address,
#: invalid PC, ECC uncorrectable.
STICKY = frozenset({700, 702, 714, 715, 716, 717, 718, 719, 214})


class CudaLane(Lane):
    """One queue's CUDA stream; completion is an event on it (see the module docstring)."""

    def __init__(self, cp: Any) -> None:
        self.cp = cp
        self.stream = cp.cuda.Stream(non_blocking=True)

    def __enter__(self) -> None:
        self.stream.__enter__()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stream.__exit__(kind, exc, tb)

    def complete(self) -> None:
        self.stream.record().synchronize()

    def lost(self, exc: BaseException) -> bool:
        runtime = self.cp.cuda.runtime
        return isinstance(exc, runtime.CUDARuntimeError) and exc.status in STICKY

    def recover(self) -> None:
        runtime = self.cp.cuda.runtime
        try:
            runtime.deviceSynchronize()
        except runtime.CUDARuntimeError as exc:
            raise DeviceLostError(
                f"the GPU stays unusable after a sticky error ({exc}): reopen the device",
                status=int(exc.status),
            ) from None


@functools.cache
def _bind_kernels(cp: Any) -> None:
    from stack.kmd.kernels import cupy_kernels

    for module in GENERIC:
        for kid, fn in module.TABLE.items():
            registry.register(NAME, kid)(functools.partial(fn, cp))
    for kid, fn in cupy_kernels.TABLE.items():
        registry.register(NAME, kid)(functools.partial(fn, cp))
    for kid in layout.ACTIVATIONS:  # NHWC launches: the NCHW kernel on transposed copies
        registry.register(NAME, kid)(layout.nhwc_aware(kid, registry.kernel(NAME, kid), cp))


def install() -> None:
    """Register the backend (its kernels are bound when it is first instantiated)."""
    registry.register_backend(NAME, CupyBackend, registry.cupy_unusable)
