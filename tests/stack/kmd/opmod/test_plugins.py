"""Operator modules as plug-ins: fixture packages really installed (pip install --target of a
local path) and discovered through the ``refstack.operator_modules`` entry-point group. The
third-party GEMM is chosen and run by the device; broken modules are skipped with a reason."""

from __future__ import annotations

import importlib
import logging
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from stack.kmd import DType, KernelId, KmdDevice
from stack.kmd import blob as B
from stack.kmd.opmod import ModuleRegistry, discover

FIXTURES = Path(__file__).parent / "fixtures"
PACKAGES = ("fastgemm", "tcgemm", "broken_import", "bad_descriptor", "future_api")


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder the five fixture packages are pip-installed into (built from copies, so the
    source tree gets no build output)."""
    root = tmp_path_factory.mktemp("opmod-plugins")
    sources = []
    for name in PACKAGES:
        shutil.copytree(FIXTURES / name, root / "src" / name)
        sources.append(str(root / "src" / name))
    target = root / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "-q", "--disable-pip-version-check", "--no-deps",
         "--no-build-isolation", "--no-index", "--target", str(target), *sources],
        check=True,
        timeout=600,
    )  # fmt: skip
    return target


@pytest.fixture
def reg(
    site: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> Iterator[ModuleRegistry]:
    monkeypatch.syspath_prepend(str(site))
    caplog.set_level(logging.WARNING, logger="stack.kmd.opmod")
    yield discover()


def test_installed_modules_are_discovered_and_broken_ones_skipped_with_their_reason(
    reg: ModuleRegistry, caplog: pytest.LogCaptureFixture
) -> None:
    assert [m.name for m in reg.modules()] == ["builtin", "fastgemm", "tcgemm"]
    assert [str(m.version) for m in reg.modules()] == ["1.0.0", "1.3.0", "0.9.1"]
    skipped = {s.name: s.reason for s in reg.skipped()}
    assert sorted(skipped) == ["bad_descriptor", "broken_import", "future_api"]
    assert skipped["broken_import"] == (
        "import failed: ModuleNotFoundError: No module named 'refstack_missing_native_library'"
    )
    assert skipped["bad_descriptor"].startswith(
        "malformed: /inputs/1/alignment: 48 is not a power of two ("
    )
    assert skipped["bad_descriptor"].endswith("refstack_bad_descriptor/gemm_bad.opdesc.json)")
    assert skipped["future_api"] == (
        "module future_api has version 2.0.0, this stack supports 1.x: refused"
    )
    logged = [r.getMessage() for r in caplog.get_records("setup")]  # discovered in the fixture
    assert sorted(logged) == sorted(f"operator module {n} skipped: {r}" for n, r in skipped.items())


def test_the_third_party_gemm_is_selected_and_runs_on_the_device(reg: ModuleRegistry) -> None:
    fastgemm = importlib.import_module("refstack_fastgemm")
    rng = np.random.default_rng(7)
    a = rng.standard_normal((70, 40), dtype=np.float32)
    b = rng.standard_normal((40, 50), dtype=np.float32)
    with KmdDevice("numpy", modules=reg) as dev:
        sel = dev.operators.selection(KernelId.GEMM)
        assert sel.descriptor.qualified_name == "fastgemm/gemm_blocked@1.3.0"
        assert sel.skipped == (("tcgemm/gemm_tc@0.9.1", "device lacks tensor_cores"),)
        ctx = dev.create_context()
        queue, fence = dev.create_queue(ctx), dev.create_fence(ctx)
        params = []
        for arr in (a, b):
            va = dev.alloc(ctx, arr.nbytes)
            dev.write(ctx, va, arr)
            params.append(B.TensorParam(va, arr.nbytes, DType.F32, arr.shape))
        out = dev.alloc(ctx, 70 * 50 * 4)
        params.append(B.TensorParam(out, 70 * 50 * 4, DType.F32, (70, 50)))
        blob = B.encode(B.InstructionBlob(KernelId.GEMM, tuple(params), ints=(0, 0, 0),
                                          floats=(1.0, 0.0)))  # fmt: skip
        before = fastgemm.CALLS[0]
        dev.submit(ctx, queue, [blob], signal=(fence, 1))
        dev.wait_fence(ctx, fence, 1, timeout_s=60)
        y = dev.read_array(ctx, out, (70, 50), DType.F32)
        assert fastgemm.CALLS[0] == before + 1
    np.testing.assert_allclose(y, a @ b, rtol=1e-5, atol=1e-4)


def test_without_entry_points_the_builtin_module_is_registered_directly(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """A source tree that was never pip-installed has no entry points; its kernels still run."""
    from stack.kmd.opmod import module

    monkeypatch.setattr(module, "entry_points", lambda group: ())  # what an uninstalled tree sees
    caplog.set_level(logging.INFO, logger="stack.kmd.opmod")
    reg = discover()
    assert [m.name for m in reg.modules()] == ["builtin"] and reg.skipped() == ()
    assert [r.getMessage() for r in caplog.records] == [
        "operator module builtin registered directly: its entry point is not installed"
    ]
