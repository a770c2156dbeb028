"""The Map page's graph: cytoscape elements with a preset layout computed here.

Layers are compound nodes stacked top to bottom in config order (a big map draws them as
plain boxes of the size given here: cytoscape's compound bookkeeping over thousands of
children costs more than the rest of the first paint); each layer's nodes sit in a grid inside
it (components first, then interfaces, scenarios, symbols ...), and nodes with no
layer share a last band. A preset layout costs the browser nothing, so the first paint of a
2,000-node map is the time to draw it, and the same map always looks the same.
"""

from __future__ import annotations

import math
from typing import Any

from web.data import DEFAULT_MAP_KINDS, MapData

KIND_ORDER = ("component", "interface", "scenario", "symbol", "file", "doc", "test")
MAX_NODES = 5000
CELL_W, CELL_H, BAND_GAP, BAND_PAD = 110, 70, 120, 30
UNPLACED = "band:unplaced"


def _label(node_id: str, data: Any) -> str:
    if data.get("kind") in ("layer", "scenario"):
        return node_id.split(":", 1)[-1]  # a scenario's title is a sentence: its id is shorter
    return str(data.get("name") or node_id).rsplit(".", 1)[-1]


def graph_elements(
    data: MapData, kinds: list[str], layers: list[str], evidence: list[str], limit: int = 2000
) -> dict[str, Any]:
    """Nodes of ``kinds`` in ``layers`` (all when empty), at most ``limit``, with the edges
    between them whose evidence is of ``evidence`` (all when empty); cached per map version."""
    data.check_names(kinds, layers, evidence)
    key = f"graph:{sorted(kinds)}:{sorted(layers)}:{sorted(evidence)}:{limit}"
    return dict(data.cached(key, lambda: _elements(data, kinds, layers, evidence, limit)))


def _elements(
    data: MapData,
    kinds: list[str],
    layers: list[str],
    evidence: list[str],
    limit: int = 2000,
) -> dict[str, Any]:
    wanted = set(kinds or DEFAULT_MAP_KINDS) - {"layer"}
    layer_ids = [layer["id"] for layer in data.layers() if not layers or layer["id"] in layers]
    rank = {k: i for i, k in enumerate(KIND_ORDER)}
    members = [
        (n, d)
        for n, d in data.nodes(kinds=wanted)
        if (d.get("layer") in layer_ids) or (not layers and d.get("layer") is None)
    ]
    members.sort(key=lambda nd: (rank.get(str(nd[1].get("kind")), 99), nd[0]))
    total = len(members)
    room = max(0, limit - len(layer_ids))
    if any(d.get("layer") not in layer_ids for _, d in members[:room]):
        room = max(0, room - 1)  # the "(no layer)" band counts as a node too
    members = members[:room]
    bands: dict[str, list[tuple[str, Any]]] = {lid: [] for lid in layer_ids}
    bands[UNPLACED] = []
    for n, d in members:
        home = d.get("layer")
        bands[home if isinstance(home, str) and home in bands else UNPLACED].append((n, d))
    elements: list[dict[str, Any]] = []
    y = 0.0
    for band, nodes in bands.items():
        if band == UNPLACED and not nodes:
            continue
        parent = f"layer:{band}" if band != UNPLACED else UNPLACED
        cols = max(10, math.ceil(math.sqrt(len(nodes) * 8)))
        rows = max(1, math.ceil(len(nodes) / cols))
        width = (min(cols, max(1, len(nodes))) - 1) * CELL_W + 2 * BAND_PAD
        height = (rows - 1) * CELL_H + CELL_H / 3 + 2 * BAND_PAD
        elements.append(  # its box too: a big map draws the band as a plain node (map.js)
            {
                "data": {
                    "id": parent,
                    "label": band if band != UNPLACED else "(no layer)",
                    "kind": "layer",
                    "layer": None if band == UNPLACED else band,
                    "w": width,
                    "h": height,
                },
                "position": {"x": width / 2 - BAND_PAD, "y": y + height / 2 - BAND_PAD},
                "classes": "layer",
            }
        )
        for i, (n, d) in enumerate(nodes):
            row, col = divmod(i, cols)
            elements.append(
                {
                    "data": {
                        "id": n,
                        "label": _label(n, d),
                        "kind": d.get("kind"),
                        "layer": d.get("layer"),
                        "parent": parent,
                    },
                    # odd columns sit a little lower, so a row's edges do not overlap in one line
                    "position": {"x": col * CELL_W, "y": y + row * CELL_H + (col % 2) * CELL_H / 3},
                    "classes": str(d.get("kind")),
                }
            )
        y += rows * CELL_H + BAND_GAP
    ids = {e["data"]["id"] for e in elements}
    bands_ids = {e["data"]["id"] for e in elements if e["data"]["kind"] == "layer"}
    edges = [  # a layer's own edges are shown by nesting, except layer-to-layer adjacency
        e
        for e in data.edges_among(ids, set(evidence) if evidence else None)
        if e["kind"] == "adjacent" or not {e["source"], e["target"]} & bands_ids
    ]
    for i, e in enumerate(edges):
        elements.append(
            {
                "data": {
                    "id": f"e{i}",
                    "source": e["source"],
                    "target": e["target"],
                    "kind": e["kind"],
                    "evidence": e["evidence"][0]["kind"],
                },
                "classes": e["kind"],
            }
        )
    return {
        "elements": elements,
        "nodes": len(ids),
        "edges": len(edges),
        "total": total + len(layer_ids),
        "truncated": total > len(members),
        "filters": {"kind": sorted(wanted | {"layer"}), "layer": layer_ids, "evidence": evidence},
    }
