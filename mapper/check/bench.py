"""``stackmap bench check``: the warm check on the stored map against the re-parsing check.

Both run in this process on the same repository, the best of ``repeat`` runs each, without git
history: ``reparse_s`` collects the facts by parsing every file again
(:func:`mapper.check.facts.collect`, what the check did before it read the map) and runs the
rules; ``map_s`` is :func:`mapper.check.run_check` on a current map (no refresh needed; the map
is brought up to date once before timing). The goal is ``map_over_reparse`` <= 0.5.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from mapper.check import registry
from mapper.check.facts import collect
from mapper.check.onmap import refreshed
from mapper.check.rules import register_all
from mapper.check.runner import check_facts, run_check
from mapper.config import load_config

GOAL = 0.5


def _best(repeat: int, run: Any) -> float:
    times = []
    for _ in range(max(1, repeat)):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def bench_check(root: Path, repeat: int = 3) -> dict[str, Any]:
    config = load_config(root)
    register_all()
    rules = registry.select(None)
    refreshed(config.root, config)
    reparse = _best(repeat, lambda: check_facts(collect(config.root, config), rules, None))
    on_map = _best(repeat, lambda: run_check(config.root, config=config, history=False))
    return {
        "reparse_s": round(reparse, 4),
        "map_s": round(on_map, 4),
        "map_over_reparse": round(on_map / reparse, 3) if reparse else None,
        "goal": GOAL,
    }
