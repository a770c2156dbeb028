"""Device capabilities read from a real GPU through CuPy (runs where one is lent)."""

from __future__ import annotations

import pytest

from stack.kmd import KernelId, KmdDevice
from stack.kmd.opmod.capabilities import CUDA_FEATURES


@pytest.mark.gpu
def test_a_cupy_device_reports_the_attributes_of_its_gpu() -> None:
    import cupy

    attrs = cupy.cuda.Device(0).attributes
    cc = (attrs["ComputeCapabilityMajor"], attrs["ComputeCapabilityMinor"])
    with KmdDevice("cupy") as dev:
        caps = dev.capabilities()
        assert (caps.backend, caps.cpu, caps.compute_capability) == ("cupy", False, cc)
        assert caps.multiprocessors == attrs["MultiProcessorCount"]
        assert caps.warp_size == attrs["WarpSize"]
        assert caps.features == frozenset(f for f, least in CUDA_FEATURES if cc >= least)
        sel = dev.operators.selection(KernelId.GEMM)
        assert (sel.descriptor.qualified_name, sel.backend) == ("builtin/gemm@1.0.0", "cupy")
