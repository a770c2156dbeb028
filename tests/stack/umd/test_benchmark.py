"""The benchmark's plumbing (its figures are printed by ``refstack bench umd``, not asserted)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from stack.cli import app


@pytest.mark.slow
def test_bench_umd_json_has_every_figure() -> None:
    result = CliRunner().invoke(app, ["bench", "umd", "--json", "--n", "30"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    for key in (
        "translate_hit_us_p50",
        "translate_miss_us_p50",
        "grpc_translate_us_p50",
        "grpc_echo_us_p50",
        "single_op_rtt_us",
        "batch64_per_op_us",
        "seed_single_op_rtt_us",
    ):
        assert report[key] > 0, key
    assert report["grpc_translate_over_echo"] == pytest.approx(
        report["grpc_translate_us_p50"] / report["grpc_echo_us_p50"], rel=0.01
    )
    assert set(report["goals_met"]) == {
        "translate_hit",
        "translate_miss",
        "grpc_translate_vs_echo",
        "batch64_vs_single",
    }
