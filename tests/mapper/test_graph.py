from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from mapper.errors import StoreError
from mapper.graph import MapGraph
from mapper.model import EdgeAttrs, EdgeKind, Location, NodeKind, Provenance


def _small() -> MapGraph:
    g = MapGraph()
    g.add_node("layer:a", NodeKind.LAYER, "A", layer="a")
    g.add_node("layer:b", NodeKind.LAYER, "B", layer="b")
    g.add_node("component:a.x", NodeKind.COMPONENT, "a.x", layer="a", path="a/x.py", line=1)
    return g


def test_nodes_edges_and_provenance() -> None:
    g = _small()
    assert g.add_edge("layer:a", "layer:b", EdgeAttrs(EdgeKind.ADJACENT, Provenance.CONFIG))
    where = Location("docs/x.md", 3)
    assert g.add_edge(
        "layer:a",
        "component:a.x",
        EdgeAttrs(EdgeKind.CONTAINS, Provenance.DOC, 0.5, where, (("why", "fm"),)),
    )
    # same kind between the same pair: the first claim stays
    assert not g.add_edge("layer:a", "component:a.x", EdgeAttrs(EdgeKind.CONTAINS, Provenance.LLM))
    assert not g.add_edge("layer:a", "component:nope", EdgeAttrs(EdgeKind.CONTAINS, Provenance.DOC))
    (edge,) = list(g.edges(EdgeKind.CONTAINS))
    assert edge == (
        "layer:a",
        "component:a.x",
        {
            "kind": "contains",
            "provenance": "doc",
            "confidence": 0.5,
            "path": "docs/x.md",
            "line": 3,
            "why": "fm",
        },
    )
    assert [n for n, _ in g.nodes(NodeKind.LAYER)] == ["layer:a", "layer:b"]
    assert [n for n, _ in g.nodes(layer="a")] == ["layer:a", "component:a.x"]
    assert g.counts() == {
        "nodes": {"component": 1, "layer": 2},
        "edges": {"adjacent": 1, "contains": 1},
    }
    with pytest.raises(StoreError, match="no node 'symbol:x'"):
        g.node("symbol:x")


def test_step_edges_may_repeat_a_target_with_their_own_key() -> None:
    g = _small()
    g.add_node("scenario:s", NodeKind.SCENARIO, "s")
    for order in (1, 2):
        assert g.add_edge(
            "scenario:s",
            "component:a.x",
            EdgeAttrs(EdgeKind.STEP, Provenance.DOC, extra=(("order", order),)),
            key=f"step:{order}",
        )
    assert [d["order"] for _, _, d in g.edges(EdgeKind.STEP)] == [1, 2]


def test_save_load_round_trip_and_schema_check(tmp_path: Path) -> None:
    g = _small()
    g.add_edge("layer:a", "layer:b", EdgeAttrs(EdgeKind.ADJACENT, Provenance.CONFIG))
    path = tmp_path / "graph.pickle"
    g.save(path)
    assert MapGraph.load(path).signature() == g.signature()
    payload = pickle.loads(path.read_bytes())
    payload["schema"] = -1
    path.write_bytes(pickle.dumps(payload))
    with pytest.raises(StoreError, match="schema -1 differs"):
        MapGraph.load(path)
    path.write_bytes(b"garbage")
    with pytest.raises(StoreError, match=r"unreadable map|not a stackmap"):
        MapGraph.load(path)
    with pytest.raises(StoreError, match="run `stackmap ingest`"):
        MapGraph.load(tmp_path / "missing.pickle")
