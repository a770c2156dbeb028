"""``stackmap bench ask``: latency of the deterministic default on a warm map.

Asks every question of the reference evaluation set ``repeat`` times against the current map
of ``root`` (opened and warmed once, as a server keeps it) and reports p50/p95/max in
milliseconds, with a baseline measured in the same run: embedding one question with the
offline MiniLM model, the floor under any answer that classifies the question.
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path
from typing import Any

from mapper.agent.ask import ask
from mapper.agent.evaluate import default_sets, load_set
from mapper.agent.mapview import open_view


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def bench_ask(root: Path, *, repeat: int = 3) -> dict[str, Any]:
    from mapper.embeddings import default_embedder

    view = open_view(root)
    questions = [q.question for q in load_set(default_sets()[0], root.resolve()).questions]
    for q in questions:  # warm: embedder, entity index, vector index, file cache
        ask(q, map=view)
    embedder = default_embedder()
    latencies: list[float] = []
    embeds: list[float] = []
    for _ in range(repeat):
        for q in questions:
            start = time.perf_counter()
            ask(q, map=view)
            latencies.append((time.perf_counter() - start) * 1000)
            start = time.perf_counter()
            embedder.embed([q])
            embeds.append((time.perf_counter() - start) * 1000)
    embed_p50 = statistics.median(embeds)
    p95 = _pct(latencies, 0.95)
    return {
        "questions": len(questions),
        "asks": len(latencies),
        "p50_ms": round(_pct(latencies, 0.5), 2),
        "p95_ms": round(p95, 2),
        "max_ms": round(max(latencies), 2),
        "baseline_embed_p50_ms": round(embed_p50, 2),
        "p95_over_embed": round(p95 / embed_p50, 2) if embed_p50 else None,
        "goal_p95_ms": 300,
    }
