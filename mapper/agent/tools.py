"""The map's functions as the agent's tools: typed arguments, compact JSON results, citations.

The tools registered here (search, node, neighbours, explain_path, interfaces_between,
impact, findings, scenario_walk, role_view, read_excerpt) run through a
:class:`~mapper.agent.toolbox.Toolbox`; importing this module registers them. Both the
deterministic default and a chat model (through :mod:`mapper.agent.lctools`) call tools
through a toolbox. Synchronous; one toolbox per question.
"""

from __future__ import annotations

from typing import Any

from mapper.agent import walks
from mapper.agent.citations import excerpt, for_edge, for_node
from mapper.agent.records import Citation
from mapper.agent.toolargs import (
    ExcerptArgs,
    FindingArgs,
    LayersArgs,
    NeighbourArgs,
    NodeArgs,
    PathArgs,
    RoleArgs,
    SearchArgs,
)
from mapper.agent.toolbox import Result, Toolbox, ToolError, ToolSpec, register, spec, specs
from mapper.errors import UnknownNameError
from mapper.model import EdgeKind, Node, NodeKind

__all__ = ["ToolError", "ToolSpec", "Toolbox", "register", "spec", "specs"]


_KEEP = (
    "description", "signature", "sync", "synchronization", "memory", "errors", "upper", "lower",
    "symbol", "contract", "paths", "upstream", "downstream", "component", "value", "doc", "title",
)  # fmt: skip


def _brief(node: Node) -> dict[str, Any]:
    row: dict[str, Any] = {"id": node.id, "kind": node.kind, "name": node.name}
    if node.layer:
        row["layer"] = node.layer
    for key in _KEEP:
        value = node.attrs.get(key)
        if value not in (None, "", [], ()):
            row[key] = " ".join(value.split())[:400] if isinstance(value, str) else value
    if node.kind == "doc" and node.attrs.get("text"):
        row["text"] = " ".join(str(node.attrs["text"]).split())[:400]
    return row


def _one(node: Node | None) -> list[Citation]:
    c = for_node(node) if node is not None else None
    return [c] if c is not None else []


def _search(box: Toolbox, a: SearchArgs) -> Result:
    hits = box.view.search(a.query, limit=a.limit, kind=a.kind)
    cites: list[Citation] = []
    rows = []
    for h in hits:
        node = box.view.node(h.id)
        c = for_node(node) if node else None
        if c is not None:
            cites.append(c)
        rows.append(
            {
                "id": h.id,
                "kind": h.kind,
                "layer": h.layer,
                "component": h.component,
                "score": h.score,
                "match": h.match,
                "snippet": h.snippet[:160],
                "where": c.where if c else None,
            }
        )
    return {"hits": rows, "_summary": f"{len(rows)} hits"}, cites


def _node(box: Toolbox, a: NodeArgs) -> Result:
    node = box.resolve(a.node_id)
    return {"node": _brief(node), "_summary": node.id}, _one(node)


def _neighbours(box: Toolbox, a: NeighbourArgs) -> Result:
    node = box.resolve(a.node_id)
    try:
        kinds = {EdgeKind(k) for k in a.edge_kinds} if a.edge_kinds else None
    except ValueError as exc:
        raise ToolError(f"{exc}; known: {', '.join(k.value for k in EdgeKind)}") from exc
    edges = box.view.neighbours(node.id, kinds, a.direction)[: a.limit]
    cites: list[Citation] = []
    rows = []
    for e in edges:
        c = for_edge(box.view, e)
        if c is not None:
            cites.append(c)
        rows.append(
            {
                "source": e.source,
                "kind": e.kind.value,
                "target": e.target,
                "evidence": e.citation.kind.value,
                "declared": bool(e.declared()),
                "observed": bool(e.observed()),
                "where": c.where if c else None,
            }
        )
    return {"node": node.id, "edges": rows, "_summary": f"{len(rows)} edges"}, cites


def _path(box: Toolbox, a: PathArgs) -> Result:
    src, dst = box.resolve(a.source), box.resolve(a.target)
    found = box.view.paths(src.id, dst.id)
    cites: list[Citation] = []
    hops = []
    for hop in found[0].hops if found else ():
        c = for_edge(box.view, hop.edge)
        if c is not None:
            cites.append(c)
        hops.append(
            {
                "from": hop.edge.source,
                "kind": hop.edge.kind.value,
                "to": hop.edge.target,
                "walked": hop.direction,
                "evidence": hop.citation.kind.value,
                "where": c.where if c else None,
            }
        )
    return {
        "source": src.id,
        "target": dst.id,
        "hops": hops,
        "_summary": f"{len(hops)} hops",
    }, cites


def _between(box: Toolbox, a: LayersArgs) -> Result:
    for layer in (a.upper, a.lower):
        if layer not in box.view.layers():
            raise UnknownNameError("layer", layer, box.view.layers())
    nodes = box.view.interfaces_between(a.upper, a.lower)
    cites = [c for n in nodes for c in _one(n)]
    rows = [
        {
            "id": n.id,
            "sync": n.attrs.get("sync"),
            "synchronization": " ".join(str(n.attrs.get("synchronization") or "").split())[:200],
        }
        for n in nodes
    ]
    return {
        "upper": a.upper,
        "lower": a.lower,
        "interfaces": rows,
        "_summary": f"{len(rows)} interfaces",
    }, cites


def _impact(box: Toolbox, a: NodeArgs) -> Result:
    data, cites = walks.impact(box.view, box.resolve(a.node_id))
    n = sum(len(v) for v in data["affected"].values())
    return {**data, "_summary": f"{n} affected"}, cites


def _findings(box: Toolbox, a: FindingArgs) -> Result:
    node_id = box.resolve(a.node_id).id if a.node_id else None
    rows = box.view.findings(node_id)
    cites = [c for r in rows for c in _one(box.view.node(r["node"]))]
    return {"findings": rows[:40], "_summary": f"{len(rows)} findings"}, cites


def _scenario(box: Toolbox, a: NodeArgs) -> Result:
    node = box.resolve(a.node_id if ":" in a.node_id else f"scenario:{a.node_id}")
    if node.kind != "scenario":
        raise ToolError(f"{node.id} is not a scenario", node=node.id)
    data, cites = walks.scenario_walk(box.view, node)
    return {**data, "_summary": f"{len(data['steps'])} steps"}, cites


def _role(box: Toolbox, a: RoleArgs) -> Result:
    role = box.view.role(a.role)
    cites: list[Citation] = []
    layers = []
    for layer in role.layers:
        comps = sorted(n.id for n in box.view.nodes(NodeKind.COMPONENT, layer))
        layers.append({"layer": layer, "components": comps})
    boundaries = []
    for upper, lower in zip(role.layers, role.layers[1:], strict=False):
        ifaces = box.view.interfaces_between(upper, lower)
        cites.extend(c for n in ifaces[:6] for c in _one(n))
        boundaries.append({"upper": upper, "lower": lower, "interfaces": [n.id for n in ifaces]})
    return {
        "role": role.id,
        "name": role.name,
        "interests": list(role.interests),
        "layers": layers,
        "boundaries": boundaries,
        "_summary": role.id,
    }, cites


def _excerpt(box: Toolbox, a: ExcerptArgs) -> Result:
    if not any(p == a.path for p, _ in box.returned):
        raise ToolError(f"{a.path} was not returned by any tool; cite only what tools return")
    text = excerpt(box.view.root, a.path, a.line, a.context)
    if text is None:
        raise ToolError(f"{a.path}:{a.line} does not exist", path=a.path, line=a.line)
    return {"path": a.path, "line": a.line, "excerpt": text, "_summary": f"{a.path}:{a.line}"}, []


for _spec in (
    ToolSpec(
        "search",
        "Hybrid search of the map: exact code names, then similar text.",
        SearchArgs,
        _search,
    ),
    ToolSpec("node", "One node of the map: kind, layer, place, contract fields.", NodeArgs, _node),
    ToolSpec(
        "neighbours",
        "A node's edges (calls, provides, consumes, implements, describes, "
        "covers, step, contains) with the evidence of each.",
        NeighbourArgs,
        _neighbours,
    ),
    ToolSpec(
        "explain_path",
        "The shortest path between two nodes, hop by hop with citations.",
        PathArgs,
        _path,
    ),
    ToolSpec(
        "interfaces_between",
        "The contract interfaces between an upper and a lower layer.",
        LayersArgs,
        _between,
    ),
    ToolSpec(
        "impact",
        "What depends on a node: consumers, providers, callers, docs, tests, scenarios.",
        NodeArgs,
        _impact,
    ),
    ToolSpec(
        "findings",
        "Where the map and the code disagree: holes, unresolved symbols.",
        FindingArgs,
        _findings,
    ),
    ToolSpec(
        "scenario_walk", "A scenario's ordered steps through the layers.", NodeArgs, _scenario
    ),
    ToolSpec(
        "role_view", "A role's layers, components, boundaries and interests.", RoleArgs, _role
    ),
    ToolSpec(
        "read_excerpt",
        "Numbered lines around a path:line that a tool returned.",
        ExcerptArgs,
        _excerpt,
    ),
):
    register(_spec)
