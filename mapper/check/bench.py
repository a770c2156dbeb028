"""``stackmap bench check``: the warm check on the stored map against the check that re-parses.

Both run in this process on the same repository, without git history, alternated ``repeat``
times (so that a shared machine's changing load weighs on both), the best run of each kept:

* ``reparse_s``, the baseline: what the check did before it read the stored map — walk the
  repository, parse every file it reads with the ingest parsers
  (:func:`mapper.check.facts.collect`), run the rules. It uses today's parsers and rules, which
  are faster than the ones the check had then, so the ratio is conservative (on this
  repository, the check of the code before the evidence graph, commit ``b033565^``, took
  0.67–0.71 s CPU where this baseline took 0.36–0.42 s on the same machine). It runs with the
  cyclic collector paused, as the map check does (:mod:`mapper.collector`), so that the
  ratio shows what not parsing saves, not what the pause does. Its rules, like the map
  check's, read the map's ``implements`` edges for SM101/SM102 (about 20 ms here): the
  rules ask the map that fact now, so the baseline carries that read too.
* ``map_s``: :func:`mapper.check.run_check` on a current map (the map is brought up to date
  once before timing, so no refresh happens while timed).

``*_cpu_s`` are the same runs in CPU time of this process, steadier on a busy machine. The
goal is ``map_over_reparse`` <= 0.5.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mapper import collector
from mapper.check import registry
from mapper.check.facts import collect
from mapper.check.onmap import refreshed
from mapper.check.rules import register_all
from mapper.check.runner import check_facts, run_check
from mapper.config import load_config

GOAL = 0.5


def _timed(run: Callable[[], object]) -> tuple[float, float]:
    """(wall, CPU) seconds of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    return time.perf_counter() - wall, time.process_time() - cpu


def bench_check(root: Path, repeat: int = 3) -> dict[str, Any]:
    config = load_config(root)
    register_all()
    rules = registry.select(None)
    refreshed(config.root, config)

    def reparse() -> None:
        with collector.paused():
            check_facts(collect(config.root, config), rules, None)

    reparses, maps = [], []
    for _ in range(max(1, repeat)):
        reparses.append(_timed(reparse))
        maps.append(_timed(lambda: run_check(config.root, config=config, history=False)))
    (reparse_s, reparse_cpu), (map_s, map_cpu) = (
        (min(w for w, _ in runs), min(c for _, c in runs)) for runs in (reparses, maps)
    )
    return {
        "reparse_s": round(reparse_s, 4),
        "map_s": round(map_s, 4),
        "map_over_reparse": round(map_s / reparse_s, 3) if reparse_s else None,
        "reparse_cpu_s": round(reparse_cpu, 4),
        "map_cpu_s": round(map_cpu, 4),
        "map_over_reparse_cpu": round(map_cpu / reparse_cpu, 3) if reparse_cpu else None,
        "goal": GOAL,
    }
