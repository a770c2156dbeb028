"""The map as it is built: a directed multigraph with typed nodes and evidence-keeping edges.

Nodes carry ``kind`` (a :class:`~mapper.model.NodeKind` value), ``name``, ``layer``, ``path``,
``line`` and kind-specific attributes (all JSON values). Edges are keyed by their kind, so one
pair of nodes has one edge of each kind (ordered ``step`` edges bring their own key), and an
edge keeps **every** claim made for it: its ``evidence`` attribute is a list of
``[kind, path, line, confidence, detail]`` items (:class:`~mapper.model.Evidence` fields),
in the order the claims were made. ``provenance``, ``confidence``, ``path`` and ``line`` give the
first claim's origin and place and the highest confidence, for readers that want one figure.

Plain dicts hold it (node id → attributes; source → target → key → attributes, and the same
attribute dicts by target → source), iterated in insertion order: nodes in the order they were
added, edges by source node, then target, then key, as they were first claimed. Graph algorithms
run on the query API's views (:mod:`mapper.query`), not here: building the map needs only these
lookups, and a networkx graph would cost the ingest a third of its graph-building time.

Persistence is :mod:`mapper.mapdb` (SQLite, no pickle). Not thread-safe: build on one thread,
then share read-only.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

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


# Each member's value, looked up instead of read through the enum's ``value`` property: link()
# runs for every claim (300k on llama.cpp) and reads three of them, which the property made a
# fifth of its cost.
_VALUE: dict[enum.Enum, str] = {m: m.value for e in (EdgeKind, EvidenceKind, Provenance) for m in e}


def evidence_kind(kind: EdgeKind, provenance: Provenance) -> EvidenceKind:
    """The evidence kind of a claim from its edge kind and provenance (see module doc)."""
    if provenance in _BY_PROVENANCE:
        return _BY_PROVENANCE[provenance]
    return _BY_EDGE_KIND.get(kind, EvidenceKind.CODE_REFERENCE)


_SCAN = 16  # evidence lists shorter than this are scanned for a repeated claim (see _is_new)


class MapGraph:
    """Typed nodes and keyed, evidence-keeping edges (see the module doc)."""

    def __init__(self) -> None:
        self._nodes: dict[str, dict[str, Any]] = {}
        self._succ: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}
        self._pred: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}
        self._claims: dict[tuple[str, str, str], set[tuple[Any, ...]]] = {}  # see _is_new
        # edge kind → (src, dst, key) of its edges, in the order they were first stored
        self._by_kind: dict[str, list[tuple[str, str, str]]] = {}

    def __contains__(self, node_id: object) -> bool:
        return node_id in self._nodes

    def __len__(self) -> int:
        return len(self._nodes)

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
        self.put_node(node_id, record)

    def put_node(self, node_id: str, record: dict[str, Any]) -> None:
        """:meth:`add_node` with the attributes as stored (``kind`` as its value)."""
        data = self._nodes.get(node_id)
        if data is not None:
            data.update({k: v for k, v in record.items() if v is not None})
            return
        self._nodes[node_id] = record
        self._succ[node_id] = {}
        self._pred[node_id] = {}

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
        out = self._succ.get(src)
        if out is None or src == dst or dst not in self._nodes:
            return False
        confidence = 1.0 if confidence == 1.0 else round(float(confidence), 4)
        value = _VALUE[kind]
        item = [_VALUE[evidence or evidence_kind(kind, provenance)], path, line, confidence, detail]
        key = key or value
        keyed = out.get(dst)
        data = keyed.get(key) if keyed is not None else None
        if data is not None:
            if self._is_new(src, dst, key, data["evidence"], item):
                data["evidence"].append(item)
                data["confidence"] = max(data["confidence"], confidence)
            return False
        record: dict[str, Any] = {
            "kind": value,
            "provenance": _VALUE[provenance],
            "confidence": confidence,
            "path": path,
            "line": line,
            "evidence": [item],
        }
        record.update(extra)
        self.put_edge(src, dst, key, record)
        return True

    def _is_new(
        self, src: str, dst: str, key: str, evidence: list[list[Any]], item: list[Any]
    ) -> bool:
        """Whether ``item`` is not yet in ``evidence`` (the edge's list, about to take it). A
        short list is scanned; a long one (a component pair lifted from thousands of call
        sites) is looked up in a set of its items, so claiming n sites costs n, not n²."""
        if len(evidence) < _SCAN:
            return item not in evidence
        seen = self._claims.get((src, dst, key))
        if seen is None:
            seen = self._claims[(src, dst, key)] = {tuple(e) for e in evidence}
        claim = tuple(item)
        if claim in seen:
            return False
        seen.add(claim)
        return True

    def put_edge(self, src: str, dst: str, key: str, record: dict[str, Any]) -> None:
        """Store an edge's attributes as they are (both nodes must exist; replaces an edge of
        the same key): what :meth:`link` does for a first claim, and what loading a map does."""
        keyed = self._succ[src].get(dst)
        if keyed is None:
            keyed = self._succ[src][dst] = self._pred[dst][src] = {}
        old = keyed.get(key)
        if old is None or old["kind"] != record["kind"]:
            if old is not None:
                self._by_kind[old["kind"]].remove((src, dst, key))
            self._by_kind.setdefault(record["kind"], []).append((src, dst, key))
        keyed[key] = record

    def edge(self, src: str, dst: str, key: str) -> Mapping[str, Any] | None:
        """The attributes of the edge ``src`` → ``dst`` with this key (its kind), or None."""
        keyed = self._succ.get(src, {}).get(dst)
        return keyed.get(key) if keyed is not None else None

    def node(self, node_id: str) -> Mapping[str, Any]:
        """The attributes of a node; StoreError naming the id when it is not on the map."""
        try:
            return self._nodes[node_id]
        except KeyError:
            raise StoreError(f"no node {node_id!r} on the map", node=node_id) from None

    def get(self, node_id: str) -> Mapping[str, Any] | None:
        return self._nodes.get(node_id)

    def nodes(
        self, kind: NodeKind | None = None, layer: str | None = None
    ) -> Iterator[tuple[str, Mapping[str, Any]]]:
        for node_id, data in self._nodes.items():
            if kind is not None and data.get("kind") != kind.value:
                continue
            if layer is not None and data.get("layer") != layer:
                continue
            yield node_id, data

    def edges(self, kind: EdgeKind | None = None) -> Iterator[tuple[str, str, Mapping[str, Any]]]:
        wanted = None if kind is None else kind.value
        for src, dst, _key, data in self.raw_edges():
            if wanted is None or data["kind"] == wanted:
                yield src, dst, data

    def edges_of(self, *kinds: EdgeKind) -> Iterator[tuple[str, str, Mapping[str, Any]]]:
        """(src, dst, attributes) of the edges of ``kinds``: those of the first kind in the
        order they were first stored, then the next kind's. Unlike :meth:`edges` it visits
        no edge of another kind (a pass over the calls of a map skips its many ``defines``)."""
        for kind in kinds:
            for src, dst, key in self._by_kind.get(_VALUE[kind], ()):
                yield src, dst, self._succ[src][dst][key]

    def out_edges(
        self, node_id: str, kind: EdgeKind | None = None
    ) -> Iterator[tuple[str, Mapping[str, Any]]]:
        """(target, attributes) of the edges leaving ``node_id`` (of one kind if given)."""
        return self._adjacent(self._succ, node_id, kind)

    def in_edges(
        self, node_id: str, kind: EdgeKind | None = None
    ) -> Iterator[tuple[str, Mapping[str, Any]]]:
        """(source, attributes) of the edges entering ``node_id`` (of one kind if given)."""
        return self._adjacent(self._pred, node_id, kind)

    @staticmethod
    def _adjacent(
        side: dict[str, dict[str, dict[str, dict[str, Any]]]],
        node_id: str,
        kind: EdgeKind | None,
    ) -> Iterator[tuple[str, Mapping[str, Any]]]:
        wanted = None if kind is None else kind.value
        for other, keyed in side[node_id].items():
            for data in keyed.values():
                if wanted is None or data["kind"] == wanted:
                    yield other, data

    def raw_edges(self) -> Iterator[tuple[str, str, str, dict[str, Any]]]:
        """(src, dst, key, attrs) of every edge."""
        for src, out in self._succ.items():
            for dst, keyed in out.items():
                for key, data in keyed.items():
                    yield src, dst, key, data

    def counts(self) -> dict[str, dict[str, int]]:
        """Number of nodes per kind and edges per kind."""
        nodes = Counter(data["kind"] for data in self._nodes.values())
        edges = Counter(
            data["kind"] for out in self._succ.values() for k in out.values() for data in k.values()
        )
        return {"nodes": dict(sorted(nodes.items())), "edges": dict(sorted(edges.items()))}

    def signature(self) -> tuple[frozenset[tuple[str, str]], frozenset[tuple[str, str, str, str]]]:
        """Comparable content: (node id, attrs) and (src, dst, key, attrs) as sorted reprs."""
        nodes = frozenset((n, repr(sorted(d.items()))) for n, d in self._nodes.items())
        edges = frozenset((s, t, k, repr(sorted(d.items()))) for s, t, k, d in self.raw_edges())
        return nodes, edges
