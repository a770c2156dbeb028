"""The auto-tuner and its database: candidates from the descriptor, the default among them,
the best kept per (kernel, shape class, device) and consulted by the UMD."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest

from stack.kmd import DType, KernelId, KmdDevice, decode_blob
from stack.umd.errors import InvalidRequestError
from stack.umd.launch_cpu import launch_cpu
from stack.umd.ops import OpKind, OpRequest, TensorDesc
from stack.umd.pipeline import Pipeline
from stack.umd.tuner import candidates_for, kernel_id_of, make_call, tune
from stack.umd.tuning import (
    TuningDatabase,
    TuningDatabaseError,
    TuningRecord,
    device_key,
    shape_class,
)


def test_shape_classes_round_every_dimension_up_to_a_power_of_two() -> None:
    call = make_call(KernelId.GEMM, ((300, 512), (512, 100)))
    assert shape_class(call) == "f32:512x512,512x128"
    conv = make_call(KernelId.CONV2D, ((1, 64, 56, 56), (64, 64, 3, 3)))
    assert shape_class(conv) == "f32:1x64x64x64,64x64x4x4"
    assert conv.outs[0].shape == (1, 64, 56, 56)


def test_candidates_are_the_descriptor_values_clamped_plus_the_default() -> None:
    call = make_call(KernelId.GEMM, ((48, 512), (512, 512)))
    default = launch_cpu(call, 2).grid[0]
    cands = candidates_for(call, 2)
    tiles = [c["tiles"] for c, _ in cands]
    assert tiles == sorted({min(v, 48) for v in (1, 2, 4, 8, 16, 32, 64)} | {default})
    assert [c["tiles"] for c, is_default in cands if is_default] == [default]


def test_bad_kernels_and_shapes_are_refused_with_what_is_known() -> None:
    with pytest.raises(
        InvalidRequestError, match=r"cannot tune 'relu'; tunable kernels: GEMM, MATMUL, CONV2D"
    ):
        kernel_id_of("relu")
    with pytest.raises(InvalidRequestError, match="inner dims differ"):
        make_call(KernelId.GEMM, ((4, 5), (6, 7)))
    with pytest.raises(InvalidRequestError, match=r"CONV2D takes 2 input shapes \(4-D and 4-D\)"):
        make_call(KernelId.CONV2D, ((4, 5),))


@pytest.mark.parametrize("kernel", ["GEMM", "Conv"])
def test_tuning_keeps_a_config_at_least_as_fast_as_the_default(kernel: str, tmp_path: Path) -> None:
    db = TuningDatabase(tmp_path / "tuning.json")
    shapes = ((128, 256), (256, 128)) if kernel == "GEMM" else ((1, 16, 16, 16), (16, 16, 3, 3))
    with KmdDevice("numpy", threads=2) as dev:
        report = tune(kernel, shapes, device=dev, db=db, warmup=1, iters=3)
    assert report.best.p95_s <= report.default.p95_s and report.gain >= 1.0
    assert sum(c.default for c in report.candidates) == 1
    saved = TuningDatabase(tmp_path / "tuning.json")
    rec = saved.lookup(report.kernel, report.shape_class, "numpy:threads=2")
    assert rec is not None and dict(rec.params) == dict(report.best.params)
    assert len(saved.records()) == 1


def _gemm_request(m: int, k: int, n: int) -> OpRequest:
    f = DType.F32
    return OpRequest.make(
        OpKind.GEMM,
        [TensorDesc(0, (m, k), f), TensorDesc(0, (k, n), f)],
        [TensorDesc(0, (m, n), f)],
    )


def test_the_umd_encodes_the_tuned_tile_count_and_the_default_elsewhere(tmp_path: Path) -> None:
    db = TuningDatabase(tmp_path / "t.json")
    call = make_call(KernelId.GEMM, ((256, 512), (512, 256)))
    db.put(TuningRecord("GEMM", shape_class(call), device_key("numpy", 2), {"tiles": 3}, 1e-3))
    db.save()
    pipe = Pipeline(target="numpy", threads=2, tuning=TuningDatabase(tmp_path / "t.json"))
    tuned = pipe.compile(_gemm_request(256, 512, 256))
    assert decode_blob(tuned.blobs[tuned.primary].data).launch.grid == (3, 1, 1)
    # same shape class (every dim rounds up to the same power of two): the same record
    near = pipe.compile(_gemm_request(200, 300, 130))
    assert decode_blob(near.blobs[near.primary].data).launch.grid[0] == 3
    # another device key (thread count) or another shape class: the UMD's default
    for other, req in (
        (Pipeline(target="numpy", threads=1, tuning=pipe.tuning), _gemm_request(256, 512, 256)),
        (pipe, _gemm_request(1024, 512, 256)),
    ):
        prog = other.compile(req)
        main = decode_blob(prog.blobs[prog.primary].data)
        want = launch_cpu(
            make_call(KernelId.GEMM, tuple(d.shape for d in req.inputs)), other.threads
        )
        assert main.launch.grid == want.grid


def test_a_database_of_another_major_version_is_refused_and_minor_read(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "t.json"
    path.write_text(
        json.dumps({"schema": "refstack.tuning-db/1", "version": "2.0.0", "records": []})
    )
    with pytest.raises(TuningDatabaseError, match=r"this stack supports 1\.x: refused"):
        TuningDatabase(path)
    path.write_text(
        json.dumps({"schema": "refstack.tuning-db/1", "version": "1.1.0", "records": []})
    )
    caplog.set_level(logging.WARNING, logger="stack.kmd.opmod")
    assert TuningDatabase(path).records() == ()
    assert len(caplog.records) == 1 and "minor versions differ" in caplog.records[0].getMessage()
    path.write_text("{broken")
    with pytest.raises(TuningDatabaseError, match="unreadable tuning database"):
        TuningDatabase(path)


def test_refstack_tune_prints_its_table_and_json(tmp_path: Path) -> None:
    import subprocess
    import sys

    db = tmp_path / "db.json"
    refstack = str(Path(sys.executable).parent / "refstack")
    cmd = [
        refstack,
        "tune",
        "gemm",
        "--shape",
        "64x128",
        "--shape",
        "128x64",
        "--db",
        str(db),
        "--iters",
        "2",
        "--warmup",
        "0",
        "--threads",
        "2",
    ]
    done = subprocess.run([*cmd, "--json"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["kernel"] == "GEMM" and report["shapes"] == [[64, 128], [128, 64]]
    assert report["device"] == "numpy:threads=2" and report["gain"] >= 1.0
    assert [c["params"]["tiles"] for c in report["candidates"]] == [1, 2, 4, 8, 16, 32, 64]
    assert sum(c["best"] for c in report["candidates"]) == 1
    assert len(json.loads(db.read_text())["records"]) == 1
    bad = subprocess.run([refstack, "tune", "relu"], capture_output=True, text=True, timeout=600)
    assert bad.returncode == 2
    assert bad.stderr.strip().splitlines()[-1] == (
        "error: [umd] cannot tune 'relu'; tunable kernels: GEMM, MATMUL, CONV2D"
    )
