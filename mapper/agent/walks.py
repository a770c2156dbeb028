"""Impact and scenario walks over the map, in the shape the agent's tools return.

These stand in for the map's own impact and scenario packages until those land: a plain
function per walk, the view first, returning JSON-ready rows whose citations come from the
edges walked. Read-only.
"""

from __future__ import annotations

from typing import Any

from mapper.agent.citations import for_edge, for_node, for_step
from mapper.agent.mapview import MapView, Node
from mapper.agent.records import Citation
from mapper.model import EdgeKind

_CALLER_DEPTH = 2
_MAX_ROWS = 24


def _row(view: MapView, node_id: str, why: str, cites: list[Citation]) -> dict[str, Any] | None:
    node = view.node(node_id)
    if node is None:
        return None
    c = for_node(node)
    if c is not None:
        cites.append(c)
    return {
        "id": node.id,
        "kind": node.kind,
        "layer": node.layer,
        "why": why,
        "where": c.where if c else None,
    }


def _symbols_of(view: MapView, node: Node) -> list[str]:
    if node.kind == "symbol":
        return [node.id]
    if node.kind == "interface":
        return [e.source for e in view.implementations(node.id)]
    return []


def impact(view: MapView, node: Node) -> tuple[dict[str, Any], list[Citation]]:
    """What depends on ``node``: who consumes and provides it (interfaces), which code calls
    its implementation (up to two calls away), which docs describe it, which tests cover it and
    which scenarios step through it. Rows carry the edge they come from."""
    cites: list[Citation] = []
    rows: dict[str, list[dict[str, Any]]] = {
        "providers": [],
        "consumers": [],
        "implemented_by": [],
        "callers": [],
        "described_by": [],
        "tests": [],
        "scenarios": [],
    }

    def add(bucket: str, edge_node: str, edge: Any, why: str) -> None:
        if len(rows[bucket]) >= _MAX_ROWS or any(r["id"] == edge_node for r in rows[bucket]):
            return
        row = _row(view, edge_node, why, cites)
        if row is None:
            return
        c = for_edge(view, edge)
        if c is not None:
            cites.append(c)
            row["evidence"] = c.where
        rows[bucket].append(row)

    for edge in view.providers(node.id):
        add("providers", edge.source, edge, "provides it")
    for edge in view.consumers(node.id):
        add("consumers", edge.source, edge, "consumes it")
    for edge in view.neighbours(node.id, {EdgeKind.IMPLEMENTS}, "in"):
        add("implemented_by", edge.source, edge, "implements it")
    for edge in view.neighbours(node.id, {EdgeKind.DESCRIBES}, "in"):
        add("described_by", edge.source, edge, "describes it")
    for edge in view.neighbours(node.id, {EdgeKind.STEP}, "in"):
        add("scenarios", edge.source, edge, "a step of this scenario")
    if node.kind == "component":
        for edge in view.neighbours(node.id, {EdgeKind.CALLS}, "in"):
            add("callers", edge.source, edge, "calls into it")
    frontier = _symbols_of(view, node)
    seen = set(frontier)
    for depth in range(1, _CALLER_DEPTH + 1):
        nxt: list[str] = []
        for sym in frontier:
            for edge in view.neighbours(sym, {EdgeKind.CALLS}, "in"):
                if edge.source in seen or not edge.source.startswith("symbol:"):
                    continue
                seen.add(edge.source)
                nxt.append(edge.source)
                add("callers", edge.source, edge, f"calls it ({depth} hop{'s' * (depth > 1)})")
            for edge in view.neighbours(sym, {EdgeKind.COVERS}, "in"):
                add("tests", edge.source, edge, "covers it")
        frontier = nxt
    layers = sorted(
        {r["layer"] for bucket in rows.values() for r in bucket if r.get("layer")},
        key=lambda lid: view.layers().index(lid) if lid in view.layers() else 99,
    )
    return {"node": node.id, "layers": layers, **rows}, cites


def scenario_walk(view: MapView, scenario: Node) -> tuple[dict[str, Any], list[Citation]]:
    """The scenario's ordered steps: each target, its layer and kind, the action, the page line."""
    cites: list[Citation] = []
    steps: list[dict[str, Any]] = []
    for step in sorted(scenario.attrs.get("steps") or [], key=lambda s: s.get("order", 0)):
        target = view.node(str(step.get("target")))
        c = for_step(scenario, step)
        if c is not None:
            cites.append(c)
        steps.append(
            {
                "order": step.get("order"),
                "target": step.get("target"),
                "kind": target.kind if target else None,
                "layer": target.layer if target else None,
                "action": step.get("action"),
                "on_map": target is not None,
                "where": c.where if c else None,
            }
        )
    head = for_node(scenario)
    if head is not None:
        cites.insert(0, head)
    return {"scenario": scenario.id, "title": scenario.name, "steps": steps}, cites
