"""``stackmap bench query``: how fast the query API answers on a repository's current map.

Figures (seconds for opening, milliseconds for queries, p95 over the samples):

* ``open_s``: reading the map file into a :class:`~mapper.query.map.Map` (uncached; median of
  ``repeat`` reads); ``open_cpu_s`` the same in CPU time of this process, steadier than wall
  time on a busy machine (opening is single-threaded work);
* ``node_p95_ms``: :meth:`Map.node` over every node id;
* ``hop3_p95_ms``: :meth:`Map.neighbourhood` with ``hops=3`` from up to ``samples`` nodes spread
  evenly over the components, interfaces and symbols;
* ``path_p95_ms``: :meth:`Map.paths` between up to ``samples`` pairs of components of adjacent
  layers (the first search also builds the path view: ``path_view_s``, reported apart).

Synchronous, read-only; the goals of the figures are printed with them.
"""

from __future__ import annotations

import functools
import itertools
import statistics
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from mapper.config import load_config
from mapper.ingest.store import Store
from mapper.model import NodeKind
from mapper.query.load import read_map
from mapper.query.map import Map

GOALS = {"open_s": 0.3, "node_p95_ms": 1.0, "hop3_p95_ms": 20.0, "path_p95_ms": 20.0}


def _p95_ms(calls: Sequence[Callable[[], object]]) -> float:
    times = []
    for call in calls:
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return round(times[max(0, int(len(times) * 0.95) - 1)], 4) if times else 0.0


def _spread(items: Sequence[str], count: int) -> list[str]:
    step = max(1, len(items) // max(1, count))
    return list(items[::step][:count])


def _adjacent_pairs(m: Map, count: int) -> list[tuple[str, str]]:
    layers = m.layers()
    pairs = []
    for upper, lower in itertools.pairwise(layers):
        above = sorted(n.id for n in m.nodes(NodeKind.COMPONENT, layer=upper))
        below = sorted(n.id for n in m.nodes(NodeKind.COMPONENT, layer=lower))
        pairs += list(itertools.product(above, below))
    step = max(1, len(pairs) // max(1, count))
    return pairs[::step][:count]


def bench_query(root: Path, samples: int = 200, repeat: int = 5) -> dict[str, Any]:
    config = load_config(root)
    store = Store(config.store_path)
    path = store.map_path()
    version = store.current_version() or 0
    opens, open_cpus = [], []
    for _ in range(max(1, repeat)):
        start, cpu = time.perf_counter(), time.process_time()
        m = read_map(path, config, version)
        opens.append(time.perf_counter() - start)
        open_cpus.append(time.process_time() - cpu)
    ids = [n.id for n in m.nodes()]
    kinds = (NodeKind.COMPONENT, NodeKind.INTERFACE, NodeKind.SYMBOL)
    starts = _spread(sorted(n.id for n in m.nodes() if n.kind in kinds), samples)
    pairs = _adjacent_pairs(m, samples)
    start = time.perf_counter()
    if pairs:
        m.paths(*pairs[0])
    view = time.perf_counter() - start
    result: dict[str, Any] = {
        "nodes": len(m),
        "edges": sum(1 for _ in m.edges()),
        "open_s": round(statistics.median(opens), 4),
        "open_cpu_s": round(statistics.median(open_cpus), 4),
        "node_p95_ms": _p95_ms([functools.partial(m.node, i) for i in ids]),
        "hop3_p95_ms": _p95_ms([functools.partial(m.neighbourhood, s, 3) for s in starts]),
        "path_view_s": round(view, 4),
        "path_p95_ms": _p95_ms([functools.partial(m.paths, a, b) for a, b in pairs]),
        "samples": {"nodes": len(ids), "hop3": len(starts), "path_pairs": len(pairs)},
    }
    result["goals"] = dict(GOALS)
    result["met"] = {k: result[k] <= goal for k, goal in GOALS.items()}
    return result
