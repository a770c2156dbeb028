"""`stackmap bench check` prints its figures: the re-parsing baseline and the check on the
stored map, alternated in one run, in wall and CPU time (no timing asserts)."""

from __future__ import annotations

from pathlib import Path

from mapper.check.bench import bench_check


def test_bench_check_figures(clean_copy: Path) -> None:
    before = sorted(p.relative_to(clean_copy) for p in clean_copy.rglob("*"))
    result = bench_check(clean_copy, repeat=2)
    assert set(result) == {
        "reparse_s",
        "map_s",
        "map_over_reparse",
        "reparse_cpu_s",
        "map_cpu_s",
        "map_over_reparse_cpu",
        "goal",
    }
    assert result["goal"] == 0.5
    assert all(result[k] > 0 for k in ("reparse_s", "map_s", "reparse_cpu_s", "map_cpu_s"))
    # only the store was written (the map brought up to date once before timing)
    after = sorted(p.relative_to(clean_copy) for p in clean_copy.rglob("*"))
    assert [p for p in after if p.parts[0] != ".stackmap"] == before
