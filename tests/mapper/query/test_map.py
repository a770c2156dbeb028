from __future__ import annotations

from operator import attrgetter
from pathlib import Path

import pytest

from mapper.config import load_config
from mapper.errors import MapNotIngested, StoreError
from mapper.ingest import ingest
from mapper.query import (
    Edge,
    EdgeKind,
    Evidence,
    EvidenceKind,
    Map,
    Node,
    NodeKind,
    open_edges,
    open_map,
)


def test_open_map_is_cached_per_store_version(built: Path, m: Map) -> None:
    assert open_map(built) is m
    with (built / "compiler" / "ir.py").open("a", encoding="utf-8") as fh:
        fh.write("\n\ndef added() -> int:\n    return 1\n")
    ingest(built, embed=False, progress=False)
    fresh = open_map(built)
    assert fresh is not m and fresh.version == m.version + 1
    assert "symbol:compiler.ir.added" in fresh and "symbol:compiler.ir.added" not in m


def test_open_map_without_a_map_names_the_command(tmp_path: Path) -> None:
    (tmp_path / "stackmap.toml").write_text('[stackmap]\nname = "x"\n', encoding="utf-8")
    with pytest.raises(MapNotIngested, match="run `stackmap ingest`"):
        open_map(tmp_path)


def test_nodes_and_neighbours_filter_by_kind_direction_and_evidence(m: Map) -> None:
    assert [n.id for n in m.nodes(NodeKind.COMPONENT, layer="compiler")] == [
        "component:compiler.passes",
        "component:compiler.ir",
    ]
    assert m.node("symbol:nope") is None
    out = m.neighbours("component:compiler.passes", direction="out")
    assert sorted((e.kind.value, e.target) for e in out) == [
        ("calls", "component:compiler.ir"),
        ("calls", "component:runtime.core"),
        ("contains", "file:compiler/passes.py"),
        ("imports", "component:compiler.ir"),
    ]
    declared = m.neighbours(
        "component:compiler.passes", {EdgeKind.CALLS}, "out", {EvidenceKind.DOC_FRONT_MATTER}
    )
    observed = m.neighbours(
        "component:compiler.passes", {EdgeKind.CALLS}, "out", {EvidenceKind.CODE_REFERENCE}
    )
    assert [e.target for e in declared] == ["component:compiler.ir", "component:runtime.core"]
    assert [e.target for e in observed] == ["component:compiler.ir"]
    assert [ev.cite() for ev in observed[0].evidence] == [  # only the evidence asked for
        "compiler/passes.py:28 (code_reference)",
        "compiler/passes.py:32 (code_reference)",
    ]
    assert [e.source for e in m.neighbours("component:compiler.ir", direction="in")] == [
        "layer:compiler",
        "component:compiler.passes",
        "component:compiler.passes",
        "test:tests/check_passes.py::test_fuse_renames",
    ]


def test_neighbourhood_counts_hops(m: Map) -> None:
    near = m.neighbourhood("interface:runtime_driver.free_pages", hops=1)
    assert near == {
        "interface:runtime_driver.free_pages": 0,
        "layer:runtime": 1,
        "layer:driver": 1,
        "component:runtime.core": 1,
        "component:driver.mini_drv": 1,
        "symbol:c:driver/mini_drv.c:mini_free_pages": 1,
        "file:contracts/runtime_driver.yaml": 1,
    }


def test_k_paths_are_distinct_cheapest_first_with_a_citation_per_hop(m: Map) -> None:
    paths = m.paths("component:compiler.passes", "component:runtime.core", k=3)
    assert [p.nodes for p in paths] == [
        ("component:compiler.passes", "component:runtime.core"),
        ("component:compiler.passes", "scenario:launch-fused", "component:runtime.core"),
        (
            "component:compiler.passes",
            "layer:compiler",
            "interface:compiler_runtime.launch",
            "component:runtime.core",
        ),
    ]
    assert [p.cost for p in paths] == sorted(p.cost for p in paths)
    second = paths[1]
    assert [(h.direction, h.edge.kind, h.citation.cite()) for h in second.hops] == [
        ("backward", EdgeKind.STEP, "docs/scenarios/launch.md:6 (doc_front_matter)"),
        ("forward", EdgeKind.STEP, "docs/scenarios/launch.md:8 (doc_front_matter)"),
    ]
    assert m.paths("component:compiler.passes", "component:compiler.passes") == []
    with pytest.raises(StoreError, match="no node 'component:nope'"):
        m.paths("component:compiler.passes", "component:nope")


def test_precise_paths_leave_out_guesses(m: Map) -> None:
    a, b, c = (Node(f"component:{x}", NodeKind.COMPONENT, x) for x in "abc")
    guess = Edge(a.id, c.id, EdgeKind.CALLS, (Evidence(EvidenceKind.SIMILARITY, confidence=0.9),))
    sure = (Evidence(EvidenceKind.CODE_REFERENCE, "a.py", 3),)
    small = Map(
        m.config,
        1,
        {n.id: n for n in (a, b, c)},
        [guess, Edge(a.id, b.id, EdgeKind.CALLS, sure), Edge(b.id, c.id, EdgeKind.CALLS, sure)],
    )
    assert [p.nodes for p in small.paths(a.id, c.id, k=2)] == [(a.id, c.id), (a.id, b.id, c.id)]
    assert [p.nodes for p in small.paths(a.id, c.id, k=2, precise=True)] == [(a.id, b.id, c.id)]
    (path,) = small.paths(a.id, c.id, precise=True)
    assert [h.citation.cite() for h in path.hops] == ["a.py:3 (code_reference)"] * 2
    assert path.cost == 2.0


def test_nodes_touched_by_contract_and_doc_lines(m: Map) -> None:
    entry = m.nodes_touched("contracts/runtime_driver.yaml", [(22, 23)])
    assert [n.id for n in entry] == ["interface:runtime_driver.free_pages"]
    assert m.nodes_touched("contracts/runtime_driver.yaml", [(40, 41)]) == []  # constants
    assert m.nodes_touched("runtime/runtime.cpp", [(1, 3)]) == []
    assert m.nodes_touched("nowhere.py", [(1, 100)]) == []


def test_interfaces_on_one_line_share_a_span_not_the_rest_of_the_file(m: Map) -> None:
    """Interfaces discovered at one definition (one per layer pair) sit on the same line; none
    of them may reach past the next interface's line."""
    at_10 = [Node(f"interface:{p}.T", NodeKind.INTERFACE, "T", "low", "h.py", 10) for p in "ab"]
    at_13 = Node("interface:a.prod", NodeKind.INTERFACE, "prod", "low", "h.py", 13)
    small = Map(m.config, 1, {n.id: n for n in (*at_10, at_13)}, [])
    assert {n.id for n in small.nodes_touched("h.py", [(11, 12)])} == {n.id for n in at_10}
    assert [n.id for n in small.nodes_touched("h.py", [(35, 41)])] == [at_13.id]


def test_interfaces_between_and_holes(m: Map) -> None:
    assert [n.id for n in m.interfaces_between("compiler", "runtime")] == [
        "interface:compiler_runtime.launch"
    ]
    assert m.interfaces_between("runtime", "compiler") == []
    assert [h.node for h in m.holes()] == [
        "component:compiler.ir",
        "component:driver.mini",
        "component:driver.mini_drv",
        "component:runtime.add",
        "doc:notes/lunch.md",
        "doc:notes/memory-release.md",
    ]


@pytest.mark.parametrize(
    "kinds",
    [(EdgeKind.IMPLEMENTS,), (EdgeKind.CALLS, EdgeKind.IMPORTS), ()],
    ids=["implements", "calls-and-imports", "none"],
)
def test_open_edges_holds_exactly_the_edges_of_its_kinds_and_their_nodes(
    built: Path, m: Map, kinds: tuple[EdgeKind, ...]
) -> None:
    part = open_edges(load_config(built), kinds)
    want = [e for e in m.edges() if e.kind in kinds]
    by_ends = attrgetter("source", "target", "key")
    assert sorted(part.edges(), key=by_ends) == sorted(want, key=by_ends)
    joined = {e.source for e in want} | {e.target for e in want}
    assert [n.id for n in part.nodes()] == [n.id for n in m.nodes() if n.id in joined]
    assert all(part.node(n.id) == n for n in m.nodes() if n.id in joined)
