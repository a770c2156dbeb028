"""GPU tuning (runs where a GPU is lent): the tiled GEMM / CONV2D kernels read the block the UMD
encodes, and ``refstack tune`` times the block sizes the GPU can run against the library."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from stack.kmd import DType, KernelId, KmdDevice
from stack.kmd.kernels import conv, cupy_tiled
from stack.kmd.kernels.gpu_tiles import unfit
from stack.umd.driver import Umd
from stack.umd.errors import InvalidRequestError
from stack.umd.ops import OpKind, OpRequest, TensorDesc
from stack.umd.tuner import make_call, tune
from stack.umd.tuning import ENV, TuningDatabase, TuningRecord, device_key, shape_class

pytestmark = pytest.mark.gpu


def _run(
    umd: Umd, req_kind: OpKind, arrays: list[np.ndarray], out: tuple[int, ...], attrs: dict
) -> np.ndarray:
    session = umd.create_session()
    try:
        f = DType.F32
        ins = []
        for a in arrays:
            va = session.alloc(a.nbytes)
            session.write(va, a)
            ins.append(TensorDesc(va, a.shape, f))
        y = session.alloc(int(np.prod(out)) * 4)
        req = OpRequest.make(req_kind, ins, [TensorDesc(y, out, f)], **attrs)
        stream = session.create_stream()
        session.wait(session.submit(stream, [session.translate(req)]), timeout_s=120)
        return session.read(y, out, f)
    finally:
        session.close()


@pytest.mark.parametrize("block", [8, 16, 32])
def test_the_umd_encodes_the_tuned_block_and_the_gpu_runs_that_tile(
    block: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(block)
    a = rng.standard_normal((300, 200), dtype=np.float32)
    b = rng.standard_normal((200, 100), dtype=np.float32)
    x = rng.standard_normal((2, 8, 20, 20), dtype=np.float32)
    w = rng.standard_normal((16, 8, 3, 3), dtype=np.float32)
    pads = {"pads": (1, 1, 1, 1)}
    with KmdDevice("cupy") as probe:
        caps = probe.capabilities()
    key = device_key("cupy", probe.threads, caps)
    db = TuningDatabase(tmp_path / "t.json")
    gemm_call = make_call(KernelId.GEMM, (a.shape, b.shape))
    conv_call = make_call(KernelId.CONV2D, (x.shape, w.shape))
    for call in (gemm_call, conv_call):
        db.put(TuningRecord(call.kernel_id.name, shape_class(call), key, {"block": block}, 1e-4))
    db.save()
    monkeypatch.setenv(ENV, str(db.path))
    before = dict(cupy_tiled.launched)
    with Umd("cupy") as umd:
        y = _run(umd, OpKind.GEMM, [a, b], (300, 100), {})
        z = _run(umd, OpKind.CONV2D, [x, w], (2, 16, 20, 20), pads)
    np.testing.assert_allclose(y, a @ b, rtol=1e-4, atol=1e-3)
    want = np.empty((2, 16, 20, 20), np.float32)
    conv.conv2d(np, [x, w], [want], (1, 1, 1, 1, 1, 1, 1, 1, 1, 0), ())
    np.testing.assert_allclose(z, want, rtol=1e-4, atol=1e-3)
    for kernel in ("GEMM", "CONV2D"):
        assert cupy_tiled.launched[(kernel, block)] == before.get((kernel, block), 0) + 1


@pytest.mark.parametrize("kernel", ["GEMM", "Conv"])
def test_tuning_on_the_gpu_times_the_blocks_it_can_run_against_the_library(
    kernel: str, tmp_path: Path
) -> None:
    db = TuningDatabase(tmp_path / "t.json")
    with KmdDevice("cupy") as dev:
        caps = dev.capabilities()
        report = tune(kernel, device=dev, db=db, warmup=2, iters=5)
    runnable = [
        t
        for t in (8, 16, 32, 64)
        if unfit(t, caps.max_threads_per_block, caps.shared_mem_per_block) is None
    ]
    assert [c.params["block"] for c in report.candidates] == [0, *runnable]
    assert [p["block"] for p, _ in report.invalid] == [
        t for t in (8, 16, 32, 64) if t not in runnable
    ]
    assert [c.params for c in report.candidates if c.default] == [{"block": 0}]
    assert report.best.p95_s <= report.default.p95_s
    assert report.device == device_key("cupy", 1, caps)
    rec = TuningDatabase(db.path).lookup(report.kernel, report.shape_class, report.device)
    assert rec is not None and dict(rec.params) == dict(report.best.params)


def test_kernels_without_a_gpu_launch_parameter_are_refused_on_the_gpu() -> None:
    with (
        KmdDevice("cupy") as dev,
        pytest.raises(InvalidRequestError, match="MATMUL is a library call"),
    ):
        tune("MATMUL", device=dev)
