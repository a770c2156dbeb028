"""The KMD benchmark runs end to end (figures are printed by the command, never asserted on)."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from stack.cli import app
from stack.kmd import bench


def test_bench_record_has_every_figure() -> None:
    record = bench.run("numpy", size=64, reps=1, iters=20)
    for key in ("fence_latency_us_p50", "fence_latency_us_p99", "gemm_gflops", "gemm_ref_gflops"):
        assert record[key] > 0
    assert record["backend"] == "numpy" and record["gemm_size"] == 64


def test_refstack_bench_kmd_json() -> None:
    result = CliRunner().invoke(
        app, ["bench", "kmd", "--json", "--size", "32", "--iters", "10", "--reps", "1"]
    )
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)
    assert {"backend", "fence_latency_us_p50", "gemm_gflops", "gemm_ratio"} <= set(record)


def test_refstack_bench_kmd_unknown_backend_exits_2() -> None:
    result = CliRunner().invoke(app, ["bench", "kmd", "--backend", "tpu", "--size", "8"])
    assert result.exit_code == 2
