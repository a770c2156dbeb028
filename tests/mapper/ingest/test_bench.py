"""`stackmap bench ingest` prints its figures (ratios come from the same run; no timing asserts)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mapper.ingest.bench import bench_ingest

pytestmark = pytest.mark.slow


def test_bench_ingest_figures(minirepo: Path) -> None:
    before = sorted(p.relative_to(minirepo) for p in minirepo.rglob("*"))
    result = bench_ingest(minirepo, repeat=1, embed=True)
    assert set(result) == {
        "files",
        "loc",
        "parse_only_s",
        "full_noembed_s",
        "full_noembed_over_parse",
        "parse_only_cpu_s",
        "full_noembed_cpu_s",
        "full_noembed_over_parse_cpu",
        "full_noembed_1proc_s",
        "full_noembed_1proc_over_parse",
        "full_noembed_1proc_cpu_s",
        "forked_parse",
        "goal_over_parse",
        "full_s",
        "incremental_1file_s",
        "incremental_file",
        "incremental_goal_s",
    }
    assert result["files"] == 9  # 8 layered code files and one test file
    assert result["loc"] == sum(
        (minirepo / p).read_bytes().count(b"\n")
        for p in (
            "compiler/__init__.py",
            "compiler/ir.py",
            "compiler/passes.py",
            "runtime/runtime.h",
            "runtime/runtime.cpp",
            "kernels/add.cu",
            "driver/mini_drv.h",
            "driver/mini_drv.c",
            "tests/check_passes.py",
        )
    )
    assert 0 < result["parse_only_s"] < result["full_noembed_s"]
    assert 0 < result["parse_only_cpu_s"] < result["full_noembed_cpu_s"]
    assert 0 < result["parse_only_s"] < result["full_noembed_1proc_s"]
    assert 0 < result["parse_only_cpu_s"] < result["full_noembed_1proc_cpu_s"]
    assert result["forked_parse"] is False  # far less code than a fork pays for
    assert result["goal_over_parse"] == 3.0
    assert result["incremental_file"] in {
        "compiler/ir.py",
        "compiler/passes.py",
        "runtime/runtime.cpp",
        "driver/mini_drv.c",
        "kernels/add.cu",
    }
    assert result["incremental_1file_s"] > 0 and result["incremental_goal_s"] >= 2.0
    # the repository itself is never written
    assert sorted(p.relative_to(minirepo) for p in minirepo.rglob("*")) == before


def test_bench_ingest_floor_leaves_out_json_descriptors(minirepo: Path) -> None:
    # a JSON file inside a layer is read by ingest (operator descriptors), not by tree-sitter
    (minirepo / "kernels/add.opdesc.json").write_text('{"name": "add"}\n', encoding="utf-8")
    result = bench_ingest(minirepo, repeat=1, embed=False)
    assert result["files"] == 9  # the code and test files tree-sitter parses, as before
    assert result["full_noembed_cpu_s"] > 0
