"""The map as it is built: a networkx MultiDiGraph with typed nodes and evidence-keeping edges.

Nodes carry ``kind`` (a :class:`~mapper.model.NodeKind` value), ``name``, ``layer``, ``path``,
``line`` and kind-specific attributes (all JSON values). Edges are keyed by their kind, so one
pair of nodes has one edge of each kind (ordered ``step`` edges bring their own key), and an
edge keeps **every** claim made for it: its ``evidence`` attribute is a list of
``[kind, path, line, confidence, detail]`` items (:class:`~mapper.model.Evidence` fields),
in the order the claims were made. ``provenance``, ``confidence``, ``path`` and ``line`` give the
first claim's origin and place and the highest confidence, for readers that want one figure.

Persistence is :mod:`mapper.mapdb` (SQLite, no pickle). Not thread-safe: build on one thread,
then share read-only.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

import networkx as nx

from mapper.errors import StoreError
from mapper.model import EdgeAttrs, EdgeKind, EvidenceKind, NodeKind, Provenance

# The evidence kind a claim has when its builder does not name one, by provenance (and by edge
# kind where one provenance stands for several kinds of claim).
_BY_PROVENANCE = {
    Provenance.CONFIG: EvidenceKind.CONFIG,
    Provenance.CONTRACT: EvidenceKind.CONTRACT,
    Provenance.DOC: EvidenceKind.DOC_FRONT_MATTER,
    Provenance.EMBEDDING: EvidenceKind.SIMILARITY,
    Provenance.LLM: EvidenceKind.LLM,
}
_BY_EDGE_KIND = {
    EdgeKind.IMPORTS: EvidenceKind.IMPORT,
    EdgeKind.DEFINES: EvidenceKind.DEFINITION,
    EdgeKind.CONTAINS: EvidenceKind.DEFINITION,
    EdgeKind.COVERS: EvidenceKind.TEST_COVERAGE,
    EdgeKind.INHERITS: EvidenceKind.INHERITANCE,
    EdgeKind.OVERRIDES: EvidenceKind.INHERITANCE,
    EdgeKind.REGISTERS: EvidenceKind.REGISTRATION,
}


def evidence_kind(kind: EdgeKind, provenance: Provenance) -> EvidenceKind:
    """The evidence kind of a claim from its edge kind and provenance (see module doc)."""
    if provenance in _BY_PROVENANCE:
        return _BY_PROVENANCE[provenance]
    return _BY_EDGE_KIND.get(kind, EvidenceKind.CODE_REFERENCE)


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
        record = {"kind": kind.value, "name": name, "layer": layer, "path": path, "line": line}
        record.update(attrs)
        if node_id in self.nx:
            self.nx.nodes[node_id].update({k: v for k, v in record.items() if v is not None})
        else:
            self.nx.add_node(node_id, **record)

    def add_edge(self, src: str, dst: str, attrs: EdgeAttrs, *, key: str | None = None) -> bool:
        """:meth:`link` with the claim as an :class:`~mapper.model.EdgeAttrs` record."""
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
            evidence=attrs.evidence,
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
        evidence: EvidenceKind | None = None,
        detail: str = "",
    ) -> bool:
        """Record one claim that ``src`` relates to ``dst`` by ``kind``.

        The first claim creates the edge (True); a later claim on the same edge adds its
        evidence to it (False), unless the very same evidence is there already. Both nodes
        must exist and differ, else nothing happens (False). ``evidence`` defaults from the
        edge kind and the provenance (:func:`evidence_kind`).
        """
        if src == dst or src not in self.nx or dst not in self.nx:
            return False
        confidence = 1.0 if confidence == 1.0 else round(float(confidence), 4)
        item = [
            (evidence or evidence_kind(kind, provenance)).value,
            path,
            line,
            confidence,
            detail,
        ]
        key = key or kind.value
        data = self.nx.get_edge_data(src, dst, key)
        if data is not None:
            if item not in data["evidence"]:
                data["evidence"].append(item)
                data["confidence"] = max(data["confidence"], confidence)
            return False
        record: dict[str, Any] = {
            "kind": kind.value,
            "provenance": provenance.value,
            "confidence": confidence,
            "path": path,
            "line": line,
            "evidence": [item],
        }
        record.update(extra)
        self.nx.add_edge(src, dst, key=key, **record)
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
        """(target, attributes) of the edges leaving ``node_id`` (of one kind if given)."""
        return self._adjacent(self.nx.succ, node_id, kind)

    def in_edges(
        self, node_id: str, kind: EdgeKind | None = None
    ) -> Iterator[tuple[str, Mapping[str, Any]]]:
        """(source, attributes) of the edges entering ``node_id`` (of one kind if given)."""
        return self._adjacent(self.nx.pred, node_id, kind)

    @staticmethod
    def _adjacent(
        side: Any, node_id: str, kind: EdgeKind | None
    ) -> Iterator[tuple[str, Mapping[str, Any]]]:
        # the adjacency view directly: an edge view per call costs more than the walk
        for other, keyed in side[node_id].items():
            for data in keyed.values():
                if kind is None or data["kind"] == kind.value:
                    yield other, data

    def raw_edges(self) -> Iterator[tuple[str, str, str, dict[str, Any]]]:
        """(src, dst, key, attrs) of every edge."""
        yield from self.nx.edges(keys=True, data=True)

    def counts(self) -> dict[str, dict[str, int]]:
        """Number of nodes per kind and edges per kind."""
        nodes = Counter(kind for _, kind in self.nx.nodes(data="kind"))
        edges = Counter(kind for _, _, kind in self.nx.edges(data="kind"))
        return {"nodes": dict(sorted(nodes.items())), "edges": dict(sorted(edges.items()))}

    def signature(self) -> tuple[frozenset[tuple[str, str]], frozenset[tuple[str, str, str, str]]]:
        """Comparable content: (node id, attrs) and (src, dst, key, attrs) as sorted reprs."""
        nodes = frozenset((n, repr(sorted(d.items()))) for n, d in self.nx.nodes(data=True))
        edges = frozenset(
            (s, t, k, repr(sorted(d.items()))) for s, t, k, d in self.nx.edges(keys=True, data=True)
        )
        return nodes, edges
