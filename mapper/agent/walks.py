"""Impact and scenario walks over the map, in the shape the agent's tools return.

Impact is the map's impact package (``mapper.impact``) run on the same loaded graph; the
scenario walk reads a scenario's ordered steps. A plain function per walk, the view first,
returning JSON-ready rows whose citations come from the edges walked. Read-only.
"""

from __future__ import annotations

import weakref
from typing import Any

from mapper.agent.citations import for_edge, for_node, for_step
from mapper.agent.mapview import MapView
from mapper.agent.records import Citation
from mapper.model import Edge, EdgeKind, Evidence, EvidenceKind, Node

_MAX_ROWS = 24
_IMPACT_VIEWS: weakref.WeakKeyDictionary[MapView, Any] = weakref.WeakKeyDictionary()


def _impact_view(view: MapView) -> Any:
    """The impact package's view over the same loaded graph, built once per map view."""
    from mapper.impact.mapview import MapView as ImpactView

    found = _IMPACT_VIEWS.get(view)
    if found is None:
        found = _IMPACT_VIEWS[view] = ImpactView(view.graph, view.config)
    return found


def _hop_citation(view: MapView, hop: Any) -> Citation | None:
    try:
        kind = EdgeKind(hop.edge)
        evidence = Evidence(EvidenceKind(hop.evidence.value), hop.path, hop.line, hop.confidence)
    except ValueError:
        return None
    return for_edge(view, Edge(hop.source, hop.target, kind, (evidence,)))


def impact(view: MapView, node: Node) -> tuple[dict[str, Any], list[Citation]]:
    """What must change with ``node`` (the impact package's precise walk): per category, each
    affected node with its layer, component, explanation path and the citation of its last
    hop (the edge that brings it in)."""
    from mapper.impact import impact_of

    report = impact_of(_impact_view(view), view.root, node.id)
    cites: list[Citation] = []
    rows: dict[str, list[dict[str, Any]]] = {}
    for item in report.affected:
        bucket = rows.setdefault(item.category.value, [])
        if len(bucket) >= _MAX_ROWS:
            continue
        c = _hop_citation(view, item.why[-1]) if item.why else None
        if c is None and (affected := view.node(item.node)) is not None:
            c = for_node(affected)
        if c is not None:
            cites.append(c)
        bucket.append(
            {
                "id": item.node,
                "kind": item.kind,
                "layer": item.layer,
                "component": item.component,
                "path": " ".join(h.render() for h in item.why),
                "evidence": c.where if c else None,
            }
        )
    layers = [
        lid
        for lid in view.layers()
        if any(r.get("layer") == lid for bucket in rows.values() for r in bucket)
    ]
    return {"node": node.id, "layers": layers, "affected": rows}, cites


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
