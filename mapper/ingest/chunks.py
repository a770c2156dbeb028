"""What the vector index holds: one chunk per doc section, symbol, interface, layer, component.

Each chunk's metadata places it on the map's four axes (layer, component, interface,
scenario) and says where it is (path, line), so a hit can be shown and filtered. Proto fields,
enumerators and constants are left to exact search (they are many and short).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mapper.graph import MapGraph
from mapper.index import Chunk
from mapper.model import NodeKind

MAX_CHARS = 1500
_SKIP_SYMBOLS = frozenset({"field", "enumerator", "constant"})


def _component_text(graph: MapGraph, data: Mapping[str, Any]) -> str:
    """A component by its page: title and opening text (declared), or its files (inferred)."""
    page = graph.get(f"doc:{data['page']}") if data.get("page") else None
    if page is not None:
        sections = [
            graph.node(d)
            for d, e in graph.out_edges(f"doc:{data['page']}")
            if e["kind"] == "contains" and d.startswith("doc:")
        ]
        first = sections[0].get("text", "") if sections else ""
        return f"component {data['name']}: {page.get('name')}. {page.get('text') or first}"
    files = sorted(
        d.removeprefix("file:")
        for d, e in graph.out_edges(f"component:{data['name']}")
        if e["kind"] == "contains"
    )
    return f"component {data['name']}: {', '.join(files)}"


def _text(node_id: str, data: Mapping[str, Any]) -> str | None:
    kind = data["kind"]
    if kind == NodeKind.DOC.value:
        body = data.get("text") or ""
        if not body.strip():
            return None  # a page without intro text is indexed through its sections
        return f"{data['name']}\n{body}"
    if kind == NodeKind.SYMBOL.value:
        if data.get("symbol_kind") in _SKIP_SYMBOLS:
            return None
        sig = data.get("signature") or ""
        doc = data.get("doc") or ""
        value = f" = {data['value']}" if data.get("value") else ""
        return f"{data['symbol_kind']} {data['qualname']}{sig}{value}\n{doc}".strip()
    if kind == NodeKind.INTERFACE.value:
        parts = [
            f"interface {data['name']} ({data.get('interface_kind')}): "
            f"{data.get('description') or ''}"
        ]
        for key in ("sync", "synchronization", "memory", "errors"):
            if data.get(key):
                parts.append(f"{key}: {data[key]}")
        return "\n".join(parts)
    if kind == NodeKind.LAYER.value:
        return f"layer {data['name']}: {data.get('description') or ''}"
    if kind == NodeKind.COMPONENT.value:
        return f"component {data['name']}"
    if kind == NodeKind.SCENARIO.value:
        steps = "; ".join(s["action"] for s in data.get("steps") or [])
        return f"scenario {data['name']}: {steps}"
    return None


def _interface(graph: MapGraph, node_id: str, data: Mapping[str, Any]) -> str:
    if data["kind"] == NodeKind.INTERFACE.value:
        return str(data["name"])
    for dst, edge in graph.out_edges(node_id):
        if edge["kind"] in ("implements", "describes") and dst.startswith("interface:"):
            return dst.removeprefix("interface:")
    return ""


def build_chunks(graph: MapGraph) -> list[Chunk]:
    chunks: list[Chunk] = []
    for node_id, data in sorted(graph.nodes(), key=lambda nd: nd[0]):
        if data["kind"] == NodeKind.COMPONENT.value:
            text: str | None = _component_text(graph, data)
        else:
            text = _text(node_id, data)
        if text is None:
            continue
        metadata = {
            "kind": data["kind"],
            "name": str(data.get("name") or ""),
            "layer": data.get("layer") or "",
            "component": data.get("component") or "",
            "interface": _interface(graph, node_id, data),
            "scenario": data.get("scenario") or "",
            "path": data.get("path") or "",
            "line": int(data.get("line") or 0),
            "symbol_kind": data.get("symbol_kind") or "",
        }
        chunks.append(Chunk(node_id, text[:MAX_CHARS], metadata))
    return chunks
