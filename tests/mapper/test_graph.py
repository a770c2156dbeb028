from __future__ import annotations

import contextlib
import sqlite3
from pathlib import Path

import pytest

from mapper import mapdb
from mapper.errors import StoreCorrupt, StoreError, StoreOutdated
from mapper.graph import MapGraph
from mapper.model import EdgeAttrs, EdgeKind, EvidenceKind, Location, NodeKind, Provenance


def _small() -> MapGraph:
    g = MapGraph()
    g.add_node("layer:a", NodeKind.LAYER, "A", layer="a")
    g.add_node("layer:b", NodeKind.LAYER, "B", layer="b")
    g.add_node("component:a.x", NodeKind.COMPONENT, "a.x", layer="a", path="a/x.py", line=1)
    return g


def test_an_edge_keeps_every_claim_as_evidence() -> None:
    g = _small()
    assert g.add_edge("layer:a", "layer:b", EdgeAttrs(EdgeKind.ADJACENT, Provenance.CONFIG))
    where = Location("docs/x.md", 3)
    assert g.add_edge(
        "layer:a",
        "component:a.x",
        EdgeAttrs(EdgeKind.CONTAINS, Provenance.DOC, 0.5, where, (("why", "fm"),)),
    )
    # a second claim on the same edge adds its evidence; the same claim again adds nothing
    code = Location("a/x.py", 7)
    assert not g.add_edge(
        "layer:a", "component:a.x", EdgeAttrs(EdgeKind.CONTAINS, Provenance.TREE_SITTER, 0.9, code)
    )
    assert not g.add_edge(
        "layer:a", "component:a.x", EdgeAttrs(EdgeKind.CONTAINS, Provenance.TREE_SITTER, 0.9, code)
    )
    assert not g.add_edge("layer:a", "component:nope", EdgeAttrs(EdgeKind.CONTAINS, Provenance.DOC))
    (edge,) = list(g.edges(EdgeKind.CONTAINS))
    assert edge == (
        "layer:a",
        "component:a.x",
        {
            "kind": "contains",
            "provenance": "doc",
            "confidence": 0.9,
            "path": "docs/x.md",
            "line": 3,
            "why": "fm",
            "evidence": [
                ["doc_front_matter", "docs/x.md", 3, 0.5, ""],
                ["definition", "a/x.py", 7, 0.9, ""],
            ],
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


def test_an_explicit_evidence_kind_wins_over_the_default() -> None:
    g = _small()
    g.link(
        "component:a.x",
        "layer:b",
        EdgeKind.REGISTERS,
        Provenance.TREE_SITTER,
        path="a/x.py",
        line=3,
        detail="@register",
    )
    g.link("component:a.x", "layer:b", EdgeKind.CALLS, Provenance.DOC, evidence=EvidenceKind.LLM)
    assert [d["evidence"] for _, _, d in g.edges()] == [
        [["registration", "a/x.py", 3, 1.0, "@register"]],
        [["llm", None, None, 1.0, ""]],
    ]


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


def test_map_file_round_trip_and_refusals(tmp_path: Path) -> None:
    g = _small()
    g.add_edge("layer:a", "layer:b", EdgeAttrs(EdgeKind.ADJACENT, Provenance.CONFIG))
    g.add_edge("layer:a", "component:a.x", EdgeAttrs(EdgeKind.CONTAINS, Provenance.DOC))
    path = tmp_path / mapdb.FILE
    mapdb.write(path, g, "key", iter([("a/x.py", "d1", "code", None, "unreadable")]))
    with mapdb.MapFile(path) as mf:
        assert mf.graph().signature() == g.signature()
        assert mf.cache_key == "key"
        assert mf.parsed() == [("a/x.py", "d1", "code", None, "unreadable")]
    with contextlib.closing(sqlite3.connect(path)) as db, db:  # a map of another schema
        db.execute("UPDATE meta SET value = '-1' WHERE key = 'schema'")
    with pytest.raises(StoreOutdated, match=r"schema -1.*run `stackmap ingest --full`"):
        mapdb.MapFile(path)
    path.write_bytes(b"garbage")
    with pytest.raises(StoreCorrupt, match=r"no SQLite header.*stackmap ingest --full") as err:
        mapdb.MapFile(path)
    assert err.value.path == str(path)


def test_a_long_evidence_list_still_takes_each_claim_once() -> None:
    g = _small()
    lines = [*range(1, 41), *range(1, 41), 7]  # 40 call sites, each claimed again, one thrice
    added = [
        g.link("layer:a", "layer:b", EdgeKind.CALLS, Provenance.TREE_SITTER, 1.0, "a/x.py", n)
        for n in lines
    ]
    assert added == [True] + [False] * 80
    ((_, _, data),) = list(g.edges(EdgeKind.CALLS))
    assert [item[2] for item in data["evidence"]] == list(range(1, 41))


def test_edges_of_kinds_visit_those_kinds_only_in_the_order_they_were_stored() -> None:
    g = _small()
    g.link("component:a.x", "layer:b", EdgeKind.CALLS, Provenance.TREE_SITTER)
    g.link("layer:a", "layer:b", EdgeKind.ADJACENT, Provenance.CONFIG)
    g.link("layer:b", "component:a.x", EdgeKind.IMPORTS, Provenance.TREE_SITTER)
    g.link("layer:a", "component:a.x", EdgeKind.CALLS, Provenance.TREE_SITTER)
    g.link("component:a.x", "layer:b", EdgeKind.CALLS, Provenance.TREE_SITTER, 0.5)  # a claim
    found = [(s, t, d["kind"]) for s, t, d in g.edges_of(EdgeKind.IMPORTS, EdgeKind.CALLS)]
    assert found == [
        ("layer:b", "component:a.x", "imports"),
        ("component:a.x", "layer:b", "calls"),
        ("layer:a", "component:a.x", "calls"),
    ]
    # an edge stored again under its key with another kind moves to that kind
    record = dict(g.edge("layer:a", "layer:b", "adjacent") or {}, kind="calls")
    g.put_edge("layer:a", "layer:b", "adjacent", record)
    assert [(s, t) for s, t, _ in g.edges_of(EdgeKind.ADJACENT)] == []
    assert [(s, t) for s, t, _ in g.edges_of(EdgeKind.CALLS)][-1] == ("layer:a", "layer:b")
    assert sorted((s, t) for s, t, _ in g.edges_of(*EdgeKind)) == sorted(
        (s, t) for s, t, _ in g.edges()
    )
