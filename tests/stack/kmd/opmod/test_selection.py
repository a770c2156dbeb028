"""Selection by device capability: the best supported candidate, skipped ones with their
reasons, a typed error naming the op and the missing features, a CPU fallback only if allowed."""

from __future__ import annotations

import copy
import json
import logging
from pathlib import Path
from typing import Any

import pytest

from stack.kmd.kernels import registry as kernels
from stack.kmd.kernels.ids import KernelId
from stack.kmd.opmod import (
    DeviceCapabilities,
    Feature,
    ModuleRegistry,
    UnknownOperatorError,
    UnsupportedOperatorError,
    cuda_capabilities_from_attributes,
    make_module,
    numpy_capabilities,
)
from stack.kmd.opmod.builtin import module as builtin_module


def gpu(major: int, minor: int) -> DeviceCapabilities:
    """A CUDA device's capabilities from its attributes (as cupy.cuda.Device.attributes)."""
    attrs = {"ComputeCapabilityMajor": major, "ComputeCapabilityMinor": minor,
             "MultiProcessorCount": 46, "MaxThreadsPerBlock": 1024, "WarpSize": 32}  # fmt: skip
    return cuda_capabilities_from_attributes(attrs, name=f"sm_{major}{minor}", memory_bytes=8 << 30)


def _descriptor(name: str, kernel: str, *, requires: list[str], backends: list[str],
                priority: int) -> dict[str, Any]:  # fmt: skip
    path = (
        Path(str(builtin_module().descriptors[0].source)).parent / f"{kernel.lower()}.opdesc.json"
    )
    data: dict[str, Any] = copy.deepcopy(json.loads(path.read_text()))
    data.update(name=name, requires=requires, backends=backends, priority=priority)
    return data


def _module(tmp_path: Path, name: str, descs: list[dict[str, Any]]) -> Any:
    kernels.known_backends()
    files = []
    table = {}
    for d in descs:
        f = tmp_path / f"{name}_{d['name']}.opdesc.json"
        f.write_text(json.dumps(d))
        files.append(f)
        for backend in d["backends"]:
            table[(d["name"], backend)] = kernels.kernel("numpy", KernelId[d["kernel"]])
    return make_module(name, "1.0.0", "1.0.0", files, table)


@pytest.fixture
def reg(tmp_path: Path) -> ModuleRegistry:
    """builtin + a tensor-core GEMM (GPU only, preferred) + a tensor-core-only CONV2D pair."""
    r = ModuleRegistry()
    r.register(builtin_module())
    r.register(_module(tmp_path, "tc", [
        _descriptor("gemm_tc", "GEMM", requires=["tensor_cores", "fp16"], backends=["cupy"],
                    priority=10),
        _descriptor("layernorm_tc", "LAYERNORM", requires=["tensor_cores"], backends=["cupy"],
                    priority=10),
    ]))  # fmt: skip
    return r


def test_capabilities_follow_the_compute_capability() -> None:
    assert gpu(6, 1).features == frozenset(
        {Feature.FP64, Feature.FP16, Feature.DOUBLE_ATOMICS, Feature.INT8_DOT}
    )
    assert gpu(8, 0).features == frozenset(Feature)
    caps = numpy_capabilities()
    assert (caps.backend, caps.cpu, caps.compute_capability) == ("numpy", True, None)
    assert Feature.TENSOR_CORES not in caps.features and Feature.BF16 not in caps.features
    assert gpu(7, 5).to_dict()["compute_capability"] == [7, 5]


def test_the_preferred_candidate_is_chosen_when_the_device_has_its_features(
    reg: ModuleRegistry,
) -> None:
    sel = reg.select("GEMM", gpu(8, 0))
    assert (sel.descriptor.qualified_name, sel.backend, sel.fallback) == (
        "tc/gemm_tc@1.0.0", "cupy", False,
    )  # fmt: skip
    assert sel.skipped == ()


def test_a_candidate_lacking_a_feature_is_skipped_with_its_reason(
    reg: ModuleRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="stack.kmd.opmod")
    sel = reg.select("GEMM", gpu(6, 1))
    assert sel.descriptor.qualified_name == "builtin/gemm@1.0.0"
    assert sel.skipped == (("tc/gemm_tc@1.0.0", "device lacks tensor_cores"),)
    assert [r.getMessage() for r in caplog.records] == [
        "GEMM: tc/gemm_tc@1.0.0 skipped on cupy:0:sm_61: device lacks tensor_cores"
    ]


def test_on_the_numpy_device_a_gpu_only_candidate_is_skipped(reg: ModuleRegistry) -> None:
    sel = reg.select("GEMM", numpy_capabilities())
    assert sel.descriptor.qualified_name == "builtin/gemm@1.0.0"
    assert sel.skipped == (("tc/gemm_tc@1.0.0", "runs on cupy, not numpy"),)


def _tc_only(tmp_path: Path) -> ModuleRegistry:
    r = ModuleRegistry()
    r.register(_module(tmp_path, "conv", [
        _descriptor("conv_tc", "CONV2D", requires=["tensor_cores"], backends=["cupy"], priority=5),
        _descriptor("conv_ref", "CONV2D", requires=[], backends=["numpy"], priority=0),
    ]))  # fmt: skip
    return r


def test_without_a_supported_candidate_a_typed_error_names_op_and_features(
    tmp_path: Path,
) -> None:
    with pytest.raises(UnsupportedOperatorError) as info:
        _tc_only(tmp_path).select("CONV2D", gpu(6, 1))
    err = info.value
    assert (err.op, err.device, err.missing) == ("CONV2D", "cupy:0:sm_61", ("tensor_cores",))
    assert err.skipped == (
        ("conv/conv_tc@1.0.0", "device lacks tensor_cores"),
        ("conv/conv_ref@1.0.0", "runs on numpy, not cupy"),
    )
    assert err.message == (
        "no implementation of CONV2D runs on cupy:0:sm_61 (missing features: tensor_cores); "
        "conv/conv_tc@1.0.0: device lacks tensor_cores; "
        "conv/conv_ref@1.0.0: runs on numpy, not cupy; CPU fallback not allowed"
    )


def test_the_cpu_fallback_is_used_only_when_allowed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="stack.kmd.opmod")
    sel = _tc_only(tmp_path).select("CONV2D", gpu(6, 1), allow_cpu_fallback=True)
    assert (sel.descriptor.qualified_name, sel.backend, sel.fallback) == (
        "conv/conv_ref@1.0.0", "numpy", True,
    )  # fmt: skip
    assert [r.getMessage() for r in caplog.records] == [
        "CONV2D: no candidate runs on cupy:0:sm_61; CPU fallback conv/conv_ref@1.0.0"
    ]


def test_the_requested_dtype_filters_candidates(reg: ModuleRegistry) -> None:
    with pytest.raises(
        UnsupportedOperatorError, match=r"builtin/gemm@1.0.0: takes f16, f32, f64, not i8"
    ):
        reg.select("GEMM", numpy_capabilities(), dtype="i8")


def test_unknown_kernels_and_descriptors_list_the_known_ones(reg: ModuleRegistry) -> None:
    with pytest.raises(
        UnknownOperatorError, match=r"no operator module implements 'WARP'; known: ADD, "
    ):
        reg.select("WARP", numpy_capabilities())
    with pytest.raises(UnknownOperatorError, match=r"no operator descriptor 'nope'; known: add, "):
        reg.descriptor("nope")
    assert reg.descriptor("GEMM").qualified_name == "tc/gemm_tc@1.0.0"
    assert reg.descriptor("gemm").qualified_name == "builtin/gemm@1.0.0"
    assert reg.descriptor("gemm_tc", module="tc").requires == frozenset(
        {Feature.TENSOR_CORES, Feature.FP16}
    )
    with pytest.raises(UnknownOperatorError, match=r"no operator module 'x'; loaded: builtin, tc"):
        reg.descriptor("gemm", module="x")
