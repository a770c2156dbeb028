"""``stackmap bench impact``: impact latency on a warm map, beside a baseline from the same run.

- ``interface``: impact (precise) of every interface on the map, ``repeat`` times each; p50 and
  p95 in milliseconds;
- ``diff``: impact of the shortest history range ``HEAD~k..HEAD`` touching at least ``files``
  code/contract files (the count is reported), best of ``repeat`` runs;
- ``baseline``: one-hop ``neighbours`` of every interface (the cheapest query the walk is made
  of), p95, and the cold load of the map; ratios are given against both.
"""

from __future__ import annotations

import statistics
import subprocess
import time
from pathlib import Path
from typing import Any

from mapper.errors import MapperError
from mapper.impact.analyse import impact_of, impact_of_diff
from mapper.impact.changes import DiffSpec, changed_files
from mapper.impact.mapview import MapView, open_view
from mapper.impact.targets import analysable
from mapper.model import NodeKind


def _p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _range(root: Path, view: MapView, files: int, limit: int = 300) -> tuple[str, int] | None:
    count = int(
        subprocess.run(
            ["git", "-C", str(root), "rev-list", "--count", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    for k in range(1, min(count - 1, limit) + 1):
        spec = DiffSpec(f"HEAD~{k}", "HEAD")
        n = sum(1 for f in changed_files(root, spec) if analysable(view.config, f.path))
        if n >= files:
            return spec.old + "..HEAD", n
    return None


def bench_impact(root: Path, *, repeat: int = 5, files: int = 10) -> dict[str, Any]:
    """The figures above; StoreError when the map was never built."""
    start = time.perf_counter()
    view = open_view(root)
    load_s = time.perf_counter() - start
    interfaces = sorted(n.id for n in view.nodes(NodeKind.INTERFACE))
    if not interfaces:
        raise MapperError("the map holds no interface to time", path=str(root))
    impact_of(view, root, interfaces[0])  # warm the view's caches once
    walk_ms: list[float] = []
    hop_ms: list[float] = []
    for _ in range(repeat):
        for iid in interfaces:
            t0 = time.perf_counter()
            view.neighbours(iid, direction="both")
            t1 = time.perf_counter()
            impact_of(view, root, iid)
            t2 = time.perf_counter()
            hop_ms.append((t1 - t0) * 1000)
            walk_ms.append((t2 - t1) * 1000)
    out: dict[str, Any] = {
        "interfaces": len(interfaces),
        "repeat": repeat,
        "map_load_s": round(load_s, 4),
        "interface_p50_ms": round(statistics.median(walk_ms), 3),
        "interface_p95_ms": round(_p(walk_ms, 0.95), 3),
        "baseline_neighbours_p95_ms": round(_p(hop_ms, 0.95), 4),
    }
    out["interface_p95_over_neighbours"] = round(
        out["interface_p95_ms"] / max(out["baseline_neighbours_p95_ms"], 1e-6), 1
    )
    out["interface_p95_over_map_load"] = round(out["interface_p95_ms"] / 1000 / load_s, 4)
    found = _range(root, view, files)
    if found is not None:
        revisions, n = found
        runs = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            impact_of_diff(view, root, revisions)
            runs.append(time.perf_counter() - t0)
        out.update(
            {
                "diff_range": revisions,
                "diff_files": n,
                "diff_best_s": round(min(runs), 4),
                "diff_median_s": round(statistics.median(runs), 4),
                "diff_over_map_load": round(min(runs) / load_s, 3),
            }
        )
    return out
