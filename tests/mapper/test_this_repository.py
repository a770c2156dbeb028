"""The map of this repository's own reference stack: every component answers the three
questions (layer, upstream, downstream), and the persisted graph loads quickly enough to use.

Without embeddings, docs lacking a layer cannot be classified; those are left to the embedded
ingest (``make demo``) and are not asserted here.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from mapper.config import load_config
from mapper.ingest import ingest
from mapper.ingest.store import Store
from mapper.model import NodeKind

REPO = Path(__file__).resolve().parents[2]


def test_reference_stack_has_no_component_holes(tmp_path: Path) -> None:
    config = dataclasses.replace(load_config(REPO), store=str(tmp_path / "store"))
    report = ingest(REPO, config, embed=False, progress=False)
    assert report.skips == ()
    component_holes = [h for h in report.holes if h.node.startswith("component:")]
    assert component_holes == [], "\n".join(f"{h.node}: {h.reason}" for h in component_holes)
    graph = Store(config.store_path).load_graph()
    layers = [n for n, _ in graph.nodes(NodeKind.LAYER)]
    assert layers == [f"layer:{layer.id}" for layer in config.layers]
    assert all(data.get("layer") for _, data in graph.nodes(NodeKind.COMPONENT))
