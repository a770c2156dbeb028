"""Kernel registry, ABIs and backend selection."""

from __future__ import annotations

from pathlib import Path

import pytest

from stack.kmd import ABIS, KernelId, KmdDevice, abi_of
from stack.kmd.errors import BackendUnavailableError, UnknownKernelError
from stack.kmd.kernels import registry
from stack.kmd.kernels.registry import available_backends, kernels_of, select_backend


def test_every_kernel_has_an_abi_and_a_numpy_implementation() -> None:
    assert set(ABIS) == set(KernelId)
    select_backend("numpy")
    assert set(kernels_of("numpy")) == set(KernelId)
    for kid, abi in ABIS.items():
        assert abi.kernel_id is kid and abi.outputs and abi.doc


def test_abi_defaults_fill_trailing_immediates() -> None:
    gemm = abi_of(KernelId.GEMM)
    assert gemm.int_values((1,)) == (1, 0, 0)
    assert gemm.float_values(()) == (1.0, 1.0)
    assert abi_of(KernelId.TRANSPOSE).int_values((2, 0, 1)) == (2, 0, 1)


def test_unknown_kernel_and_backend_list_the_known_ones() -> None:
    with pytest.raises(UnknownKernelError) as info:
        abi_of(999)
    assert "GEMM" in str(info.value)
    with pytest.raises(UnknownKernelError) as info:
        registry.kernel("tpu", KernelId.GEMM)
    assert "numpy" in info.value.known
    with pytest.raises(UnknownKernelError):
        KmdDevice("tpu")


def test_backend_selection_honours_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(registry.ENV_BACKEND, "numpy")
    dev = KmdDevice()
    assert dev.backend == "numpy" and dev.stats().backend == "numpy"
    dev.close()
    assert "numpy" in available_backends()


def test_unavailable_backend_is_a_typed_refusal() -> None:
    if "cupy" in available_backends():
        pytest.skip("CuPy is usable here")
    with pytest.raises(BackendUnavailableError):
        KmdDevice("cupy")
    assert select_backend(None).name == "numpy"


@pytest.mark.gpu
def test_auto_selects_cupy_on_a_gpu(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(registry.ENV_BACKEND, raising=False)
    dev = KmdDevice()
    assert dev.backend == "cupy"
    assert set(kernels_of("cupy")) == set(KernelId)
    dev.close()


def test_conformance_suite_covers_every_kernel() -> None:
    here = Path(__file__).parent
    text = "".join(p.read_text() for p in here.glob("test_conformance_*.py"))
    missing = [k.name for k in KernelId if f"KernelId.{k.name}" not in text]
    assert missing == []
