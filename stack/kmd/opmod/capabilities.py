"""Device capabilities as the KMD reports them: hardware features and limits of one device.

The NumPy device (the null device, the host CPU) declares its capabilities. A CuPy device reads
them from the GPU's attributes (compute capability, multiprocessors, threads per block, shared
memory per block, warp size) and derives the features from the compute capability: fp16
arithmetic from 5.3, double atomics from 6.0, int8 dot products (dp4a) from 6.1, tensor cores
from 7.0, bf16 from 8.0.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from stack.kmd.opmod.descriptor import Feature

#: (feature, minimum compute capability) for CUDA devices.
CUDA_FEATURES: tuple[tuple[Feature, tuple[int, int]], ...] = (
    (Feature.FP64, (1, 3)),
    (Feature.FP16, (5, 3)),
    (Feature.DOUBLE_ATOMICS, (6, 0)),
    (Feature.INT8_DOT, (6, 1)),
    (Feature.TENSOR_CORES, (7, 0)),
    (Feature.BF16, (8, 0)),
)

#: What the NumPy device computes natively: half and double floats, exact int8 products,
#: and host atomics; no bf16 type and no tensor cores.
NUMPY_FEATURES = frozenset({Feature.FP16, Feature.FP64, Feature.INT8_DOT, Feature.DOUBLE_ATOMICS})


@dataclass(frozen=True, slots=True)
class DeviceCapabilities:
    """Features and limits of one device."""

    device: str
    backend: str
    features: frozenset[Feature]
    compute_capability: tuple[int, int] | None
    multiprocessors: int
    max_threads_per_block: int
    warp_size: int
    memory_bytes: int
    cpu: bool
    #: Bytes of shared memory one block may use (0 on the CPU: no shared memory).
    shared_mem_per_block: int = 0

    def missing(self, required: Iterable[Feature]) -> frozenset[Feature]:
        """The features of ``required`` this device lacks."""
        return frozenset(required) - self.features

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready record."""
        return {
            "device": self.device,
            "backend": self.backend,
            "features": sorted(self.features),
            "compute_capability": list(self.compute_capability)
            if self.compute_capability
            else None,
            "multiprocessors": self.multiprocessors,
            "max_threads_per_block": self.max_threads_per_block,
            "warp_size": self.warp_size,
            "memory_bytes": self.memory_bytes,
            "cpu": self.cpu,
            "shared_mem_per_block": self.shared_mem_per_block,
        }


def numpy_capabilities(memory_bytes: int = 0) -> DeviceCapabilities:
    """The declared capabilities of the NumPy device: one "multiprocessor" per host CPU."""
    return DeviceCapabilities(
        device="numpy:cpu",
        backend="numpy",
        features=NUMPY_FEATURES,
        compute_capability=None,
        multiprocessors=os.cpu_count() or 1,
        max_threads_per_block=1,
        warp_size=1,
        memory_bytes=memory_bytes,
        cpu=True,
    )


def cuda_capabilities_from_attributes(
    attributes: Mapping[str, int], *, name: str, memory_bytes: int, ordinal: int = 0
) -> DeviceCapabilities:
    """Capabilities from CUDA device attributes, named as ``cupy.cuda.Device.attributes``
    names them (ComputeCapabilityMajor/Minor, MultiProcessorCount, MaxThreadsPerBlock,
    WarpSize, MaxSharedMemoryPerBlock — 48 KiB, CUDA's static limit, when absent)."""
    cc = (int(attributes["ComputeCapabilityMajor"]), int(attributes["ComputeCapabilityMinor"]))
    return DeviceCapabilities(
        device=f"cupy:{ordinal}:{name}",
        backend="cupy",
        features=frozenset(f for f, least in CUDA_FEATURES if cc >= least),
        compute_capability=cc,
        multiprocessors=int(attributes["MultiProcessorCount"]),
        max_threads_per_block=int(attributes["MaxThreadsPerBlock"]),
        warp_size=int(attributes["WarpSize"]),
        memory_bytes=memory_bytes,
        cpu=False,
        shared_mem_per_block=int(attributes.get("MaxSharedMemoryPerBlock", 48 * 1024)),
    )


def cupy_capabilities(ordinal: int = 0) -> DeviceCapabilities:  # pragma: no cover - needs a GPU
    """Read the capabilities of CUDA device ``ordinal`` through CuPy."""
    import cupy  # type: ignore[import-not-found,unused-ignore]

    dev = cupy.cuda.Device(ordinal)
    props = cupy.cuda.runtime.getDeviceProperties(ordinal)
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    return cuda_capabilities_from_attributes(
        dev.attributes, name=name, memory_bytes=int(dev.mem_info[1]), ordinal=ordinal
    )


def capabilities_of(backend: str, memory_bytes: int = 0) -> DeviceCapabilities:
    """The KMD-reported capabilities of a device of ``backend`` ("numpy" or "cupy")."""
    if backend == "cupy":
        return cupy_capabilities()
    return numpy_capabilities(memory_bytes)
