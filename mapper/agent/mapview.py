"""The agent's one window on the map: the query API (:mod:`mapper.query`) plus search.

Everything the agent knows it reads through :class:`MapView`: node, nodes, neighbours (edges
with all their evidence), explanation paths, providers/consumers/implementations, interfaces
between layers, holes and check findings come from the opened :class:`~mapper.query.Map`;
hybrid search (:mod:`mapper.search`) and impact (:mod:`mapper.impact`) run on the stored graph,
loaded once when first needed. Nothing here walks the repository's files. Read-only; safe to
share between threads once opened.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Collection, Iterator
from pathlib import Path
from typing import Any

from mapper.config import RoleConfig, StackmapConfig, load_config
from mapper.errors import MapNotIngested, StoreError, UnknownNameError
from mapper.graph import MapGraph
from mapper.model import Edge, EdgeKind, Node, NodeKind
from mapper.query import ExplanationPath, Map, open_map
from mapper.search import SearchHit, search_graph

_PATHS = 5  # candidate paths weighed against layer shortcuts


def role_of(config: StackmapConfig, role_id: str) -> RoleConfig:
    """A role of the config; UnknownNameError listing the known ones."""
    for role in config.roles:
        if role.id == role_id:
            return role
    raise UnknownNameError("role", role_id, [r.id for r in config.roles])


class MapView:
    """The opened map of one repository, as the agent's tools use it."""

    def __init__(self, root: Path, config: StackmapConfig, opened: Map) -> None:
        self.root = root
        self.config = config
        self.map = opened
        self._graph: MapGraph | None = None
        self._index: Any = None
        self._embedded: bool | None = None
        self._lock = threading.Lock()

    # -- the query API ---------------------------------------------------------------------
    def node(self, node_id: str) -> Node | None:
        return self.map.node(node_id)

    def nodes(self, kind: NodeKind | None = None, layer: str | None = None) -> Iterator[Node]:
        return self.map.nodes(kind, layer)

    def layers(self) -> list[str]:
        return self.map.layers()

    def role(self, role_id: str) -> RoleConfig:
        return role_of(self.config, role_id)

    def neighbours(
        self, node_id: str, kinds: Collection[EdgeKind] | None = None, direction: str = "both"
    ) -> list[Edge]:
        if direction not in ("in", "out", "both"):
            raise ValueError(f"direction {direction!r} is not in, out or both")
        return self.map.neighbours(node_id, kinds, direction)  # type: ignore[arg-type]

    def providers(self, interface_id: str) -> list[Edge]:
        return self.map.providers(interface_id)

    def consumers(self, interface_id: str) -> list[Edge]:
        return self.map.consumers(interface_id)

    def implementations(self, interface_id: str) -> list[Edge]:
        return self.map.implementations(interface_id)

    def interfaces_between(self, upper: str, lower: str) -> list[Node]:
        """The interfaces from ``upper`` down to ``lower``, in contract order."""
        found = self.map.interfaces_between(upper, lower)
        return sorted(found, key=lambda n: (n.path or "", n.line or 0, n.id))

    def paths(self, src: str, dst: str) -> list[ExplanationPath]:
        """The cheapest explanation path that does not pass through a whole layer (a layer
        relates everything in it, so it explains little), else the cheapest; [] when none."""
        if src == dst or src not in self.map or dst not in self.map:
            return []
        found = self.map.paths(src, dst, k=_PATHS)
        for path in found:
            if not any(n.startswith("layer:") for n in path.nodes[1:-1]):
                return [path]
        return found[:1]

    def findings(self, node_id: str | None = None) -> list[dict[str, Any]]:
        """Holes and check findings (all rules), or those about ``node_id``."""
        rows: list[dict[str, Any]] = [
            {"node": h.node, "finding": "hole", "detail": f"missing {', '.join(h.missing)}"}
            for h in self.map.holes()
            if node_id is None or h.node == node_id
        ]
        for f in self.map.findings(node_id):
            where = f.primary
            rows.append(
                {
                    "node": f.nodes[0] if f.nodes else None,
                    "finding": f.rule,
                    "detail": f.message,
                    "where": str(where) if where else None,
                }
            )
        return rows

    # -- search and the stored graph ----------------------------------------------------------
    @property
    def graph(self) -> MapGraph:
        """The stored graph (what search and impact read), loaded on first use."""
        with self._lock:
            if self._graph is None:
                from mapper.ingest.store import Store

                self._graph = Store(self.config.store_path).load_graph()
            return self._graph

    def search(self, query: str, *, limit: int = 8, kind: str | None = None) -> list[SearchHit]:
        graph = self.graph
        with self._lock:
            if self._embedded is None:
                from mapper.ingest.store import Store

                try:
                    self._embedded = bool(Store(self.config.store_path).report().get("embedded"))
                except StoreError:
                    self._embedded = False
            if self._embedded and self._index is None:
                from mapper.index import VectorIndex

                self._index = VectorIndex.for_config(self.config)
        return search_graph(graph, self.config, query, limit=limit, kind=kind, index=self._index)


_VIEWS: weakref.WeakKeyDictionary[Map, MapView] = weakref.WeakKeyDictionary()
_LOCK = threading.Lock()


def open_view(root: Path, config: StackmapConfig | None = None) -> MapView:
    """The current map of ``root`` (the query API's cached :func:`~mapper.query.open_map`);
    StoreError naming the command to run when no map has been built."""
    config = config or load_config(root)
    try:
        opened = open_map(root, config)
    except MapNotIngested:
        raise StoreError(
            f"no map of {root} yet; run `stackmap ingest {root}` first",
            path=str(config.store_path),
        ) from None
    with _LOCK:
        view = _VIEWS.get(opened)
        if view is None:
            view = _VIEWS[opened] = MapView(root, config, opened)
        return view
