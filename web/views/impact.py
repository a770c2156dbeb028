"""The Impact page and ``/api/impact``: what depends on a symbol or an interface.

Backend: the node's direct dependents over the graph's edges (one hop, each with its
evidence), until ``mapper.impact`` is on main; the record says so in ``backend``.
"""

from __future__ import annotations

from typing import Any

from web.data import MapData
from web.errors import BadRequest

MAX_TARGET = 300
BACKEND = "direct dependents: one hop over the map's edges"
#: Edge kinds along which a change to the target reaches the source of the edge.
DEPENDS = ("consumes", "implements", "calls", "imports", "covers", "describes", "step", "provides")


def impact(data: MapData, target: str) -> dict[str, Any]:
    target = target.strip()
    if not target:
        raise BadRequest("name a symbol or an interface, e.g. interface:umd_kmd.free")
    if len(target) > MAX_TARGET:
        raise BadRequest(f"a target is at most {MAX_TARGET} characters", length=len(target))
    node_id, attrs = data.node_record(target)
    per_layer: dict[str, list[dict[str, Any]]] = {}
    for edge in data.neighbours(node_id)["in"]:
        if edge["kind"] not in DEPENDS:
            continue
        _, src = data.node_record(edge["source"])
        layer = src.get("layer") or "(no layer)"
        per_layer.setdefault(layer, []).append(
            {"id": edge["source"], "kind": src.get("kind"), "name": src.get("name"), "path": [edge]}
        )
    order = [layer["id"] for layer in data.layers()] + ["(no layer)"]
    return {
        "target": node_id,
        "kind": attrs.get("kind"),
        "backend": BACKEND,
        "layers": [{"layer": k, "items": per_layer[k]} for k in order if k in per_layer],
        "count": sum(len(v) for v in per_layer.values()),
    }
