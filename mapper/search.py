"""Looking at the map: hybrid search, a node with its edges, and listings.

:func:`search` is hybrid: names in the query that look like code (``KmdDevice.alloc``,
``REFSTACK_IOCTL_ALLOC``, ``stack/kmd/memory.py``, or a one-word query) first match symbols,
files, interfaces and components exactly (full name, or its last segment); then the vector
index ranks chunks by cosine similarity to the query. When the map was built without
embeddings, a lexical score (shared words) stands in for the vectors. Synchronous; read-only.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from mapper.config import StackmapConfig, load_config
from mapper.errors import StoreError, UnknownNameError
from mapper.graph import MapGraph
from mapper.model import NodeKind

_TOKEN = re.compile(r"[A-Za-z_][\w.:/\-]*")
_WORD = re.compile(r"[a-z0-9]+")
_EXACT_KINDS = frozenset({"symbol", "file", "interface", "component", "layer", "scenario", "test"})


@dataclass(frozen=True, slots=True)
class SearchHit:
    id: str
    kind: str
    name: str
    layer: str | None
    component: str | None
    path: str | None
    line: int | None
    snippet: str
    score: float
    match: str  # "exact" | "vector" | "lexical"

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @property
    def where(self) -> str:
        if not self.path:
            return "-"
        return f"{self.path}:{self.line}" if self.line else self.path


def _code_like(token: str, single: bool) -> bool:
    return single or any(c in token for c in "._:/") or token != token.lower()


def _tail(name: str) -> str:
    return re.split(r"::|\.|/|#", name)[-1]


def snippet(data: Mapping[str, Any], limit: int = 160) -> str:
    parts = [
        data.get("signature") or "",
        data.get("description") or "",
        data.get("doc") or "",
        data.get("text") or "",
        data.get("value") or "",
    ]
    text = " ".join(" ".join(str(p).split()) for p in parts if p)
    return text[:limit] + ("…" if len(text) > limit else "")


def _hit(node_id: str, data: Mapping[str, Any], score: float, match: str) -> SearchHit:
    comp = data.get("component")
    if data.get("kind") == NodeKind.COMPONENT.value:
        comp = data.get("name")
    return SearchHit(
        node_id,
        str(data.get("kind")),
        str(data.get("name")),
        data.get("layer"),
        comp if isinstance(comp, str) else None,
        data.get("path"),
        data.get("line"),
        snippet(data),
        round(score, 4),
        match,
    )


def _exact(graph: MapGraph, query: str) -> list[SearchHit]:
    """Full name (1.0), a dotted/``::`` suffix of the name (0.95), the last segment only (0.8)."""
    tokens = _TOKEN.findall(query)
    wanted = [t.rstrip(".:/()") for t in tokens if _code_like(t, len(tokens) == 1)]
    if not wanted:
        return []
    full = {t.lower() for t in wanted}
    suffixes = tuple(sep + t.lower() for t in wanted for sep in (".", "::", "/", ":"))
    tails = {_tail(t).lower() for t in wanted}
    hits: list[SearchHit] = []
    for node_id, data in graph.nodes():
        if data.get("kind") not in _EXACT_KINDS:
            continue
        low = str(data.get("name") or "").lower()
        if low in full or node_id.split(":", 1)[-1].lower() in full:
            hits.append(_hit(node_id, data, 1.0, "exact"))
        elif low.endswith(suffixes):
            hits.append(_hit(node_id, data, 0.95, "exact"))
        elif _tail(low) in tails:
            hits.append(_hit(node_id, data, 0.8, "exact"))
    return sorted(hits, key=lambda h: (-h.score, h.kind != "symbol", h.id))


def _lexical(graph: MapGraph, query: str, limit: int) -> list[SearchHit]:
    words = {w for w in _WORD.findall(query.lower()) if len(w) > 2}
    if not words:
        return []
    scored: list[tuple[float, str]] = []
    for node_id, data in graph.nodes():
        text = f"{data.get('name')} {snippet(data, 2000)}".lower()
        present = set(_WORD.findall(text))
        common = sum(1 for w in words if w in present or any(p.startswith(w[:4]) for p in present))
        if common:
            scored.append((common / len(words), node_id))
    scored.sort(key=lambda s: (-s[0], s[1]))
    return [_hit(n, graph.node(n), s, "lexical") for s, n in scored[:limit]]


def _filtered(hits: Iterable[SearchHit], kind: str | None, layer: str | None) -> list[SearchHit]:
    return [
        h for h in hits if (kind is None or h.kind == kind) and (layer is None or h.layer == layer)
    ]


def search(
    root: Path,
    query: str,
    *,
    limit: int = 10,
    kind: str | None = None,
    layer: str | None = None,
    config: StackmapConfig | None = None,
) -> list[SearchHit]:
    """Hybrid search of the current map of ``root``; StoreError when there is no map."""
    from mapper.ingest import load_map

    config = config or load_config(root)
    return search_graph(load_map(root, config), config, query, limit=limit, kind=kind, layer=layer)


def search_graph(
    graph: MapGraph,
    config: StackmapConfig,
    query: str,
    *,
    limit: int = 10,
    kind: str | None = None,
    layer: str | None = None,
    index: Any = None,
) -> list[SearchHit]:
    """:func:`search` over an already loaded graph (``index``: an open
    :class:`~mapper.index.VectorIndex` to reuse; one is opened when the map is embedded and
    the index is of the map's version — else words are matched instead, see
    :func:`vector_lag`). StoreCorrupt when the index is damaged."""
    hits = _filtered(_exact(graph, query), kind, layer)[:limit]
    seen = {h.id for h in hits}
    embedded = index is not None or _embedded(config)
    if embedded and index is None and vector_lag(config) is not None:
        embedded = False
    if embedded:
        from mapper.embeddings import default_embedder
        from mapper.index import VectorIndex

        index = index or VectorIndex.for_config(config)
        where: dict[str, Any] = {}
        if kind:
            where["kind"] = kind
        if layer:
            where["layer"] = layer
        if len(where) > 1:
            where = {"$and": [{k: v} for k, v in where.items()]}
        vector = default_embedder().embed([query])[0]
        for vh in index.query(vector, n=limit + len(hits), where=where or None):
            if vh.id in seen or vh.id not in graph:
                continue
            hits.append(_hit(vh.id, graph.node(vh.id), vh.score, "vector"))
            seen.add(vh.id)
    else:
        for lh in _filtered(_lexical(graph, query, limit * 3), kind, layer):
            if lh.id not in seen:
                hits.append(lh)
                seen.add(lh.id)
    return hits[:limit]


def _embedded(config: StackmapConfig) -> bool:
    from mapper.ingest.store import Store

    return bool(Store(config.store_path).report().get("embedded"))


def vector_lag(config: StackmapConfig) -> str | None:
    """Why the vector index of an embedded map is behind the current map (None when it is in
    step, or the map has no embeddings): search then matches words and says this reason."""
    from mapper.ingest.store import Store
    from mapper.ingest.sync import index_lag

    if not _embedded(config):
        return None
    lag = index_lag(config, Store(config.store_path).current_version())
    return None if lag is None else f"{lag}; run `stackmap ingest` to bring it up to date"


def resolve_id(graph: MapGraph, raw: str) -> str:
    """``raw`` when it is a node id, else the one node ``<kind>:raw`` (``umd_kmd.submit`` →
    ``interface:umd_kmd.submit``); StoreError when there is none or several."""
    if raw in graph:
        return raw
    found = [f"{k.value}:{raw}" for k in NodeKind if f"{k.value}:{raw}" in graph]
    if len(found) == 1:
        return found[0]
    if found:
        raise StoreError(f"{raw!r} is ambiguous: {', '.join(found)}", node=raw)
    raise StoreError(f"no node {raw!r} on the map", node=raw)


def show(graph: MapGraph, node_id: str) -> dict[str, Any]:
    """A node's attributes with its outgoing and incoming edges (StoreError when absent).

    ``node_id`` may leave out its kind prefix when that names one node.
    """
    node_id = resolve_id(graph, node_id)
    data = dict(graph.node(node_id))
    out = [{"to": dst, **edge} for dst, edge in graph.out_edges(node_id)]
    into = [{"from": src, **edge} for src, edge in graph.in_edges(node_id)]
    return {
        "id": node_id,
        "node": data,
        "out": sorted(out, key=lambda e: (e["kind"], e["to"])),
        "in": sorted(into, key=lambda e: (e["kind"], e["from"])),
    }


def node_kind(kind: str | None) -> NodeKind | None:
    """The node kind named ``kind`` (None for None); UnknownNameError listing the kinds."""
    if kind is None:
        return None
    try:
        return NodeKind(kind)
    except ValueError:
        raise UnknownNameError("node kind", kind, [k.value for k in NodeKind]) from None


def listing(
    graph: MapGraph, kind: str | None = None, layer: str | None = None
) -> list[dict[str, Any]]:
    """Nodes of one kind and/or layer, by kind then id (layers top to bottom).

    UnknownNameError for an unknown kind.
    """
    rows = [
        {
            "id": n,
            "kind": d.get("kind"),
            "name": d.get("name"),
            "layer": d.get("layer"),
            "path": d.get("path"),
            "line": d.get("line"),
            "hole": d.get("hole"),
            "order": d.get("index", 0),
            **(_interface_fields(d) if d.get("kind") == "interface" else {}),
        }
        for n, d in graph.nodes(node_kind(kind), layer)
    ]
    rows.sort(key=lambda r: (r["kind"], r.pop("order"), r["id"]))  # layers top to bottom
    return rows


def _interface_fields(data: Mapping[str, Any]) -> dict[str, Any]:
    """An interface's layer pair, where it comes from (``discovered``, ``contract``, ``both``)
    and both sides' places: providers (definition, dispatchers, slot fillers), consumers (every
    use site)."""

    def sites(key: str) -> list[dict[str, Any]]:
        return [
            {"node": node, "path": path, "line": line, "at": f"{path}:{line}"}
            for node, path, line in data.get(key) or ()
        ]

    return {
        "layer_pair": data.get("layer_pair"),
        "source": data.get("source"),
        "contract": data.get("contract"),
        "symbol": data.get("symbol"),
        "providers": sites("providers"),
        "consumers": sites("consumers"),
    }
