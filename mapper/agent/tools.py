"""The map's functions as the agent's tools: typed arguments, compact JSON results, citations.

Each tool is registered with :func:`register` under a name, with a pydantic model for its
arguments and a function ``(toolbox, args) -> (data, citations)``. A :class:`Toolbox` runs
them on one :class:`~mapper.agent.mapview.MapView`, recording every call and every citation a
tool returned — the only citations an answer may carry. Both the deterministic default and a
chat model (through :mod:`mapper.agent.lctools`) call tools through a toolbox. Synchronous;
one toolbox per question.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from mapper.agent import walks
from mapper.agent.citations import excerpt, for_edge, for_node
from mapper.agent.mapview import MapView
from mapper.agent.records import Citation, ToolCall
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
from mapper.errors import MapperError, UnknownNameError
from mapper.model import EdgeKind, Node, NodeKind

Result = tuple[dict[str, Any], list[Citation]]


class ToolError(MapperError):
    """A tool was called with arguments it cannot use (unknown node, bad values)."""


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    description: str
    args: type[BaseModel]
    run: Callable[[Toolbox, Any], Result]


_REGISTRY: dict[str, ToolSpec] = {}


def register(spec: ToolSpec) -> ToolSpec:
    _REGISTRY[spec.name] = spec
    return spec


def spec(name: str) -> ToolSpec:
    if name not in _REGISTRY:
        raise UnknownNameError("tool", name, list(_REGISTRY))
    return _REGISTRY[name]


def specs() -> list[ToolSpec]:
    return list(_REGISTRY.values())


class Toolbox:
    """Runs tools on one map view and keeps what they returned. A chat model may run several
    tool calls of one turn at once: recording is locked."""

    def __init__(self, view: MapView) -> None:
        self.view = view
        self.calls: list[ToolCall] = []
        self.returned: dict[tuple[str, int], Citation] = {}
        self._lock = threading.Lock()

    def resolve(self, raw: str) -> Node:
        """A node from its id, or from a name that names one node (``umd_kmd.free``)."""
        node = self.view.node(raw)
        if node is not None:
            return node
        for kind in NodeKind:
            node = self.view.node(f"{kind.value}:{raw}")
            if node is not None:
                return node
        raise ToolError(f"no node {raw!r} on the map; use search to find one", node=raw)

    def run(self, name: str, **kwargs: Any) -> dict[str, Any]:
        """Run a tool; its data with ``citations`` (``path:line`` strings) added."""
        tool = spec(name)
        try:
            args = tool.args(**kwargs)
        except ValidationError as exc:
            raise ToolError(f"bad arguments for {name}: {exc.errors()[0]['msg']}") from exc
        start = time.perf_counter()
        data, cites = tool.run(self, args)
        unique: dict[tuple[str, int], Citation] = {}
        for c in cites:
            unique.setdefault((c.path, c.line), c)
        ms = (time.perf_counter() - start) * 1000
        summary = data.pop("_summary", "") or f"{len(unique)} citations"
        call = ToolCall(name, tuple(sorted(args.model_dump().items())), summary, ms, len(unique))
        with self._lock:
            self.returned.update({k: v for k, v in unique.items() if k not in self.returned})
            self.calls.append(call)
        return {**data, "citations": [c.where for c in unique.values()]}

    def run_json(self, name: str, **kwargs: Any) -> str:
        """:meth:`run` as compact JSON; a tool error becomes ``{"error": ...}``."""
        try:
            return json.dumps(self.run(name, **kwargs), separators=(",", ":"), default=str)
        except MapperError as exc:
            return json.dumps({"error": str(exc)})


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
