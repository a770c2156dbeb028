"""Execution lanes: the host lane of the null device, and on a GPU one CUDA stream per queue,
event-based completion and the device-lost state after a sticky CUDA error (gpu-marked)."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

from stack.kmd import FaultKind, KernelId, KmdDevice
from stack.kmd.kernels.lane import HOST
from stack.kmd.kernels.registry import select_backend

from .conftest import Rig


def test_the_null_device_runs_every_queue_in_the_host_lane() -> None:
    backend = select_backend("numpy")
    assert backend.lane() is HOST
    assert not HOST.lost(RuntimeError("any kernel error")) and HOST.recover() is None
    assert FaultKind.DEVICE_LOST.value == 7


@pytest.mark.gpu
def test_each_queue_gets_its_own_non_blocking_stream() -> None:
    backend = select_backend("cupy")
    a, b = backend.lane(), backend.lane()
    cp = backend.cp  # type: ignore[attr-defined]
    assert a.stream.ptr != b.stream.ptr  # type: ignore[attr-defined]
    assert cp.cuda.Stream.null.ptr not in (a.stream.ptr, b.stream.ptr)  # type: ignore[attr-defined]


@pytest.mark.gpu
def test_two_queues_on_two_streams_compute_the_right_results() -> None:
    with KmdDevice("cupy") as dev:
        rigs = [Rig(dev), Rig(dev)]
        data = [np.linspace(-1, 1, 1 << 20, dtype=np.float32) * (i + 1) for i in range(2)]
        outs, values = [], []
        for rig, x in zip(rigs, data, strict=True):
            src, dst = rig.put(x), rig.empty(x.shape)
            values.append(rig.submit([rig.blob(KernelId.RELU, [src, dst])] * 8))
            outs.append(dst)
        for rig, value, dst, x in zip(rigs, values, outs, data, strict=True):
            dev.wait_fence(rig.ctx, rig.fence, value, timeout_s=60)
            got = dev.read_array(rig.ctx, dst.addr, dst.shape, dst.dtype)
            np.testing.assert_array_equal(got, np.maximum(x, 0))


_STICKY = r"""
import json
import cupy as cp
from stack.kmd.errors import DeviceLostError
from stack.kmd.kernels.registry import select_backend

lane = select_backend("cupy").lane()
bad = cp.RawKernel(r'extern "C" __global__ void bad(float* p) { p[threadIdx.x] = 1.0f; }', "bad")
try:
    with lane:
        bad((1,), (32,), (cp.uint64(8),))  # writes through a null pointer: illegal address
    lane.complete()
    print(json.dumps({"raised": None}))
except cp.cuda.runtime.CUDARuntimeError as exc:
    result = {"raised": int(exc.status), "lost": lane.lost(exc)}
    try:
        lane.recover()
        result["recovered"] = True
    except DeviceLostError:
        result["recovered"] = False
    print(json.dumps(result))
"""


@pytest.mark.gpu
def test_a_sticky_cuda_error_is_a_lost_device_that_reset_reports() -> None:
    """In a child process: a sticky error poisons the whole CUDA context."""
    out = subprocess.run(
        [sys.executable, "-c", _STICKY], capture_output=True, text=True, timeout=300, check=True
    )
    result = json.loads(out.stdout.strip().splitlines()[-1])
    assert result == {"raised": 700, "lost": True, "recovered": False}
