"""The map as a graph: a networkx MultiDiGraph with typed nodes and provenance-carrying edges.

Nodes carry ``kind`` (a :class:`~mapper.model.NodeKind` value), ``name``, ``layer``, ``path``,
``line`` and kind-specific attributes (all JSON-representable). Edges are keyed by their kind,
so one pair of nodes has at most one edge of each kind (the first claim wins); every edge
carries the fields of :class:`~mapper.model.EdgeAttrs` flattened: ``kind``, ``provenance``,
``confidence``, ``path``, ``line`` and the ``extra`` pairs.

Persistence is one pickle holding a schema header and networkx's node and adjacency dicts
(loaded as they are, no per-edge insertion; files holding node/edge lists still load);
``load`` refuses a file of another schema version with StoreError (the ingest then
rebuilds). Not thread-safe: build on one thread, then share read-only.
"""

from __future__ import annotations

import operator
import os
import pickle
from collections import Counter
from collections.abc import Iterator, Mapping
from itertools import chain
from pathlib import Path
from typing import Any

import networkx as nx

from mapper.errors import StoreError
from mapper.model import SCHEMA_VERSION, EdgeAttrs, EdgeKind, NodeKind, Provenance

_MAGIC = "stackmap-graph"
_LAYOUT = 2  # 2: networkx's own node/adjacency dicts; absent: node and edge lists
# enum member → its plain string (``.value`` goes through a descriptor: slow on hot paths)
_VALUE: dict[Any, str] = {m: m.value for e in (NodeKind, EdgeKind, Provenance) for m in e}


class MapGraph:
    """Typed view over a MultiDiGraph; ``nx`` exposes the raw graph for algorithms."""

    def __init__(self, graph: nx.MultiDiGraph | None = None) -> None:
        self.nx: nx.MultiDiGraph = graph if graph is not None else nx.MultiDiGraph()

    def __contains__(self, node_id: object) -> bool:
        return node_id in self.nx

    def __len__(self) -> int:
        return int(self.nx.number_of_nodes())

    def add_node(
        self,
        node_id: str,
        kind: NodeKind,
        name: str,
        *,
        layer: str | None = None,
        path: str | None = None,
        line: int | None = None,
        **attrs: Any,
    ) -> None:
        """Add a node, or update the attributes of an existing one (non-None values win)."""
        record = {"kind": _VALUE[kind], "name": name, "layer": layer, "path": path, "line": line}
        if attrs:
            record.update(attrs)
        current = self.nx._node.get(node_id)
        if current is not None:
            current.update({k: v for k, v in record.items() if v is not None})
        else:  # direct insertion, as networkx's add_node does it, without its overhead
            self.nx._node[node_id] = record
            self.nx._succ[node_id] = {}
            self.nx._pred[node_id] = {}

    def put_node(self, node_id: str, record: dict[str, Any]) -> None:
        """Insert a new node with a prebuilt attribute dict (taken as is, not copied); it must
        carry what :meth:`add_node` stores (``kind`` value, ``name``, ``layer``, ``path``,
        ``line``, then the extra attributes). The caller checks the id is not on the map yet."""
        self.nx._node[node_id] = record
        self.nx._succ[node_id] = {}
        self.nx._pred[node_id] = {}

    def add_edge(self, src: str, dst: str, attrs: EdgeAttrs, *, key: str | None = None) -> bool:
        """Add an edge between existing nodes; False when it already exists or a node is missing.

        The edge key defaults to the kind (one edge per kind and pair); ordered ``step`` edges
        pass their own key so a scenario may visit one component twice.
        """
        where = attrs.location
        return self.link(
            src,
            dst,
            attrs.kind,
            attrs.provenance,
            attrs.confidence,
            where.path if where else None,
            where.line if where else None,
            key=key,
            extra=attrs.extra,
        )

    def link(
        self,
        src: str,
        dst: str,
        kind: EdgeKind,
        provenance: Provenance,
        confidence: float = 1.0,
        path: str | None = None,
        line: int | None = None,
        *,
        key: str | None = None,
        extra: tuple[tuple[str, Any], ...] = (),
    ) -> bool:
        """:meth:`add_edge` with the :class:`~mapper.model.EdgeAttrs` fields passed flat (the
        ingest's hot path: no record built per edge); same rules, same stored attributes."""
        succ = self.nx._succ  # direct insertion: networkx's add_edge costs ~5x more
        if src == dst or src not in succ or dst not in succ:
            return False
        kind_value = _VALUE[kind]
        key = key or kind_value
        keydict = succ[src].get(dst)
        if keydict is not None and key in keydict:
            return False
        record: dict[str, Any] = {
            "kind": kind_value,
            "provenance": _VALUE[provenance],
            "confidence": 1.0 if confidence == 1.0 else round(float(confidence), 4),
            "path": path,
            "line": line,
        }
        if extra:
            record.update(extra)
        if keydict is None:
            keydict = succ[src][dst] = {}
            self.nx._pred[dst][src] = keydict
        keydict[key] = record
        return True

    def node(self, node_id: str) -> Mapping[str, Any]:
        """The attributes of a node; StoreError naming the id when it is not on the map."""
        try:
            return self.nx.nodes[node_id]
        except KeyError:
            raise StoreError(f"no node {node_id!r} on the map", node=node_id) from None

    def get(self, node_id: str) -> Mapping[str, Any] | None:
        return self.nx.nodes[node_id] if node_id in self.nx else None

    def nodes(
        self, kind: NodeKind | None = None, layer: str | None = None
    ) -> Iterator[tuple[str, Mapping[str, Any]]]:
        for node_id, data in self.nx.nodes(data=True):
            if kind is not None and data.get("kind") != kind.value:
                continue
            if layer is not None and data.get("layer") != layer:
                continue
            yield node_id, data

    def edges(self, kind: EdgeKind | None = None) -> Iterator[tuple[str, str, Mapping[str, Any]]]:
        for src, dst, data in self.nx.edges(data=True):
            if kind is None or data["kind"] == kind.value:
                yield src, dst, data

    def out_edges(
        self, node_id: str, kind: EdgeKind | None = None
    ) -> Iterator[tuple[str, Mapping[str, Any]]]:
        for _, dst, data in self.nx.out_edges(node_id, data=True):
            if kind is None or data["kind"] == kind.value:
                yield dst, data

    def in_edges(
        self, node_id: str, kind: EdgeKind | None = None
    ) -> Iterator[tuple[str, Mapping[str, Any]]]:
        for src, _, data in self.nx.in_edges(node_id, data=True):
            if kind is None or data["kind"] == kind.value:
                yield src, data

    def raw_edges(self) -> Iterator[tuple[str, str, str, dict[str, Any]]]:
        """(src, dst, key, attrs) straight from the adjacency dicts (no view overhead)."""
        for src, nbrs in self.nx._succ.items():
            for dst, keydict in nbrs.items():
                for key, data in keydict.items():
                    yield src, dst, key, data

    def counts(self) -> dict[str, dict[str, int]]:
        """Number of nodes per kind and edges per kind."""
        kind = operator.itemgetter("kind")
        nodes = Counter(map(kind, self.nx._node.values()))
        keydicts = chain.from_iterable(map(dict.values, self.nx._succ.values()))
        edges = Counter(map(kind, chain.from_iterable(map(dict.values, keydicts))))
        return {"nodes": dict(sorted(nodes.items())), "edges": dict(sorted(edges.items()))}

    def dumps(self) -> bytes:
        """The persisted form: a schema header with the node attributes and the adjacency
        (successors and predecessors share their edge dicts), pickled."""
        payload = {
            "magic": _MAGIC,
            "schema": SCHEMA_VERSION,
            "layout": _LAYOUT,
            "adjacency": (self.nx._node, self.nx._succ, self.nx._pred),
        }
        return pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)

    def save(self, path: Path) -> None:
        """Write the graph to ``path`` atomically (temporary file, then rename)."""
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_bytes(self.dumps())
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: Path) -> MapGraph:
        """Read a saved graph; StoreError when missing, corrupt or of another schema version."""
        try:
            with path.open("rb") as fh:
                payload = pickle.load(fh)
        except FileNotFoundError:
            raise StoreError(
                "no map has been built here; run `stackmap ingest`", path=str(path)
            ) from None
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ValueError) as exc:
            raise StoreError(f"unreadable map: {exc}", path=str(path)) from exc
        if not isinstance(payload, dict) or payload.get("magic") != _MAGIC:
            raise StoreError("not a stackmap graph file", path=str(path))
        if payload.get("schema") != SCHEMA_VERSION:
            raise StoreError(
                f"map schema {payload.get('schema')} differs from {SCHEMA_VERSION}; re-ingest",
                path=str(path),
                schema=payload.get("schema"),
            )
        graph = nx.MultiDiGraph()
        if payload.get("layout") == _LAYOUT:  # the adjacency as networkx keeps it
            try:
                graph._node, graph._succ, graph._pred = payload["adjacency"]
            except (KeyError, TypeError, ValueError) as exc:
                raise StoreError(f"unreadable map: {exc}", path=str(path)) from exc
        else:  # node and edge lists, as earlier versions wrote them
            graph.add_nodes_from(payload["nodes"])
            graph.add_edges_from(payload["edges"])
        return cls(graph)

    def signature(self) -> tuple[frozenset[tuple[str, str]], frozenset[tuple[str, str, str, str]]]:
        """Comparable content: (node id, attrs) and (src, dst, key, attrs) as sorted reprs."""
        nodes = frozenset((n, repr(sorted(d.items()))) for n, d in self.nx.nodes(data=True))
        edges = frozenset(
            (s, t, k, repr(sorted(d.items()))) for s, t, k, d in self.nx.edges(keys=True, data=True)
        )
        return nodes, edges
