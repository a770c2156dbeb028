"""Fixtures of the KMD tests: a device per test and a small rig to place tensors and run blobs."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

from stack.kmd import DType, KernelId, KmdDevice
from stack.kmd import blob as B
from stack.kmd.errors import FenceFailedError

#: Backends every conformance test runs on; CuPy only where a GPU is usable (gpu marker).
BACKENDS = ["numpy", pytest.param("cupy", marks=pytest.mark.gpu)]


class Rig:
    """One context with one queue and one fence on a device; tensors in, blobs through, out."""

    def __init__(self, dev: KmdDevice) -> None:
        self.dev = dev
        self.ctx = dev.create_context()
        self.queue = dev.create_queue(self.ctx)
        self.fence = dev.create_fence(self.ctx)
        self.value = 0

    def put(self, array: np.ndarray) -> B.TensorParam:
        """Allocate and upload ``array``; its tensor descriptor."""
        array = np.asarray(array, order="C")
        va = self.dev.alloc(self.ctx, max(array.nbytes, 1))
        self.dev.write(self.ctx, va, array)
        return B.TensorParam(va, array.nbytes, DType.from_numpy(array.dtype), array.shape)

    def empty(self, shape: tuple[int, ...], dtype: Any = np.float32) -> B.TensorParam:
        """An output tensor (allocated, zeroed)."""
        dt = DType.from_numpy(dtype)
        nbytes = int(np.prod(shape, dtype=np.int64)) * dt.itemsize
        return B.TensorParam(self.dev.alloc(self.ctx, max(nbytes, 1)), nbytes, dt, tuple(shape))

    def blob(self, kid: KernelId, params: list[B.TensorParam], ints=(), floats=()) -> bytes:  # type: ignore[no-untyped-def]
        return B.encode(
            B.InstructionBlob(kid, tuple(params), ints=tuple(ints), floats=tuple(floats))
        )

    def submit(self, blobs: list[bytes], wait: tuple[tuple[int, int], ...] = ()) -> int:
        self.value += 1
        self.dev.submit(self.ctx, self.queue, blobs, signal=(self.fence, self.value), wait=wait)
        return self.value

    def run(
        self,
        kid: KernelId,
        inputs: list[np.ndarray],
        out_shape: tuple[int, ...],
        out_dtype: Any = np.float32,
        ints=(),
        floats=(),
    ) -> np.ndarray:  # type: ignore[no-untyped-def]
        """Run one kernel through the device and return its output."""
        (out,) = self.run_outputs(kid, inputs, [(out_shape, out_dtype)], ints, floats)
        return out

    def run_outputs(
        self,
        kid: KernelId,
        inputs: list[np.ndarray],
        outputs: list[tuple[tuple[int, ...], Any]],
        ints=(),
        floats=(),
    ) -> list[np.ndarray]:  # type: ignore[no-untyped-def]
        """Run one kernel of several outputs, given as (shape, dtype), and return them all."""
        params = [self.put(a) for a in inputs]
        outs = [self.empty(shape, dtype) for shape, dtype in outputs]
        try:
            value = self.submit([self.blob(kid, [*params, *outs], ints, floats)])
            self.dev.wait_fence(self.ctx, self.fence, value, timeout_s=30)
            return [self.dev.read_array(self.ctx, o.addr, o.shape, o.dtype) for o in outs]
        except FenceFailedError:  # keep the (module-scoped) rig usable for the next test
            self.dev.reset_queue(self.ctx, self.queue)
            self.fence, self.value = self.dev.create_fence(self.ctx), 0
            raise
        finally:
            for p in [*params, *outs]:
                self.dev.free(self.ctx, p.addr)


@pytest.fixture
def dev() -> Iterator[KmdDevice]:
    device = KmdDevice("numpy")
    yield device
    device.close()


@pytest.fixture
def rig(dev: KmdDevice) -> Rig:
    return Rig(dev)


@pytest.fixture(scope="module", params=BACKENDS)
def backend_rig(request: pytest.FixtureRequest) -> Iterator[Rig]:
    device = KmdDevice(request.param)
    yield Rig(device)
    device.close()
