"""`stackmap bench query` prints its figures and goals (no timing asserts)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from mapper.query import Map


def test_bench_query_figures(built: Path, m: Map) -> None:
    stackmap = Path(sys.executable).parent / "stackmap"
    result = subprocess.run(
        [str(stackmap), "bench", "query", str(built), "--json", "--samples", "5"],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    figures = json.loads(result.stdout)
    assert set(figures) == {
        "nodes",
        "edges",
        "open_s",
        "open_cpu_s",
        "node_p95_ms",
        "hop3_p95_ms",
        "path_view_s",
        "path_p95_ms",
        "samples",
        "goals",
        "met",
    }
    assert figures["nodes"] == len(m) and figures["edges"] == sum(1 for _ in m.edges())
    assert figures["samples"] == {"nodes": len(m), "hop3": 5, "path_pairs": 5}
    assert figures["goals"] == {
        "open_s": 0.3,
        "node_p95_ms": 1.0,
        "hop3_p95_ms": 20.0,
        "path_p95_ms": 20.0,
    }
    assert set(figures["met"]) == set(figures["goals"])
