"""A node's detail: where it is in code, its docs, its contract, findings and neighbours."""

from __future__ import annotations

from typing import Any

from web.data import MapData

CONTRACT_FIELDS = (
    "contract",
    "upper",
    "lower",
    "symbol",
    "signature",
    "sync",
    "synchronization",
    "memory",
    "errors",
    "version",
    "description",
)
NEIGHBOUR_LIMIT = 300  # per direction; the count says how many there are


def node_detail(data: MapData, raw_id: str) -> dict[str, Any]:
    """Everything the detail page shows for one node (UnknownNode when not on the map)."""
    node_id, attrs = data.node_record(raw_id)
    edges = data.neighbours(node_id)
    docs = []
    for e in edges["in"]:
        if e["kind"] == "describes":
            _, doc = data.node_record(e["source"])
            docs.append(
                {
                    "id": e["source"],
                    "heading": doc.get("name"),
                    "path": doc.get("path"),
                    "line": doc.get("line"),
                    "text": str(doc.get("text") or "")[:1200],
                }
            )
    contract = {k: attrs.get(k) for k in CONTRACT_FIELDS if attrs.get(k) not in (None, "")}
    skip = {"text", "steps", "hole", *CONTRACT_FIELDS}
    return {
        "id": node_id,
        "kind": attrs.get("kind"),
        "name": attrs.get("name"),
        "layer": attrs.get("layer"),
        "location": {"path": attrs.get("path"), "line": attrs.get("line")},
        "excerpt": data.excerpt(attrs.get("path"), attrs.get("line")),
        "code": [{"path": p, "id": f"file:{p}"} for p in attrs.get("paths") or []],
        "attributes": {
            k: v for k, v in sorted(attrs.items()) if k not in skip and v not in (None, "", [], {})
        },
        "contract": contract if attrs.get("kind") == "interface" else {},
        "steps": sorted(attrs.get("steps") or [], key=lambda s: s.get("order", 0)),
        "hole": attrs.get("hole"),
        "docs": docs,
        "findings": data.node_findings(node_id),
        "out": edges["out"][:NEIGHBOUR_LIMIT],
        "in": edges["in"][:NEIGHBOUR_LIMIT],
        "counts": {"out": len(edges["out"]), "in": len(edges["in"])},
    }
