"""The one place impact and the scenario walks read the map: the query API.

Impact and the walks speak only to :class:`MapView`, a thin view over
:class:`mapper.query.Map`: ``node``, ``nodes``, ``neighbours`` (edges carrying all their
evidence), ``nodes_touched``, ``layers`` and ``source`` (a file's text as the map holds it).
The walks read a file's text only through ``source``: the map's copy of what it was built
from, so its lines agree with the map's whatever the files hold now.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator, Sequence
from pathlib import Path

from mapper.config import StackmapConfig
from mapper.graph import MapGraph
from mapper.model import Edge, EdgeKind, Evidence, EvidenceKind, Node, NodeKind, evidence_rank
from mapper.query import Direction, Map, open_map

__all__ = [
    "CODE_EVIDENCE",
    "STRENGTH",
    "Edge",
    "Evidence",
    "EvidenceKind",
    "MapView",
    "Node",
    "cite",
    "open_view",
]

#: Evidence the code itself gives (and the config placing files in layers): what
#: ``--precise`` follows.
CODE_EVIDENCE = frozenset(
    {
        EvidenceKind.CODE_REFERENCE,
        EvidenceKind.IMPORT,
        EvidenceKind.REGISTRATION,
        EvidenceKind.INHERITANCE,
        EvidenceKind.DEFINITION,
        EvidenceKind.CONFIG,
        EvidenceKind.TEST_COVERAGE,
        EvidenceKind.CONTRACT,
    }
)

#: Weakest first: the order items are labelled and ranked by.
STRENGTH: dict[EvidenceKind, int] = {
    EvidenceKind.LLM: 0,
    EvidenceKind.SIMILARITY: 1,
    EvidenceKind.DOC_MENTION: 2,
    EvidenceKind.DOC_FRONT_MATTER: 3,
    EvidenceKind.IMPORT: 4,
    EvidenceKind.TEST_COVERAGE: 5,
    EvidenceKind.CONFIG: 6,
    EvidenceKind.REGISTRATION: 7,
    EvidenceKind.INHERITANCE: 7,
    EvidenceKind.CONTRACT: 8,
    EvidenceKind.DEFINITION: 9,
    EvidenceKind.CODE_REFERENCE: 9,
}


def cite(ev: Evidence) -> str:
    """``path:line`` of a piece of evidence (``-`` when it has no place)."""
    where = ev.path or "-"
    return f"{where}:{ev.line}" if ev.line is not None else where


class MapView:
    """The calls of the query API impact and the walks make, over one opened map.

    Built from an opened :class:`~mapper.query.Map`, or from a graph already loaded by its
    caller (a :class:`~mapper.graph.MapGraph` with its config), read into the same records.
    """

    def __init__(self, source: Map | MapGraph, config: StackmapConfig | None = None) -> None:
        if isinstance(source, MapGraph):
            if config is None:
                raise TypeError("a MapGraph needs its StackmapConfig")
            source = _from_graph(source, config)
        self.map = source
        self.config: StackmapConfig = source.config
        self.cache: dict[str, object] = {}  # indexes features build over this map, by name

    def node(self, node_id: str) -> Node | None:
        return self.map.node(node_id)

    def nodes(self, kind: NodeKind | None = None, layer: str | None = None) -> Iterator[Node]:
        return self.map.nodes(kind, layer)

    def layers(self) -> list[str]:
        return self.map.layers()

    def neighbours(
        self,
        node_id: str,
        kinds: Collection[EdgeKind] | None = None,
        direction: Direction = "out",
        evidence: Collection[EvidenceKind] | None = None,
    ) -> list[Edge]:
        """Edges at ``node_id``; with ``evidence``, each keeps only those kinds of evidence
        and an edge left with none is dropped."""
        return self.map.neighbours(node_id, kinds, direction, evidence)

    def nodes_touched(self, path: str, ranges: Sequence[Sequence[int]]) -> list[Node]:
        """Definitions in ``path`` whose span overlaps a range, innermost first."""
        return self.map.nodes_touched(path, ranges)

    def citation(self, edge: Edge) -> Evidence:
        """The edge's strongest evidence; a structural claim written nowhere (a file defines a
        symbol) is cited where the node it rests on is defined."""
        ev = edge.citation
        if ev.path is not None:
            return ev
        kind = edge.kind
        at = edge.target if kind in (EdgeKind.DEFINES, EdgeKind.CONTAINS) else edge.source
        node = self.map.node(at)
        if node is None or node.path is None:
            return ev
        return Evidence(ev.kind, node.path, node.line, ev.confidence, ev.detail)

    def source(self, path: str) -> str | None:
        """The text of ``path`` as the map was built from it (None where it holds none)."""
        return self.map.source(path)

    def definitions_at(self, path: str, line: int) -> list[Node]:
        """Definitions whose span contains ``line``, innermost first."""
        return self.map.nodes_touched(path, [(line, line)])


_EDGE_FIELDS = frozenset({"kind", "provenance", "confidence", "path", "line", "evidence"})
_NODE_FIELDS = frozenset({"kind", "name", "layer", "path", "line"})


def _from_graph(graph: MapGraph, config: StackmapConfig) -> Map:
    """The query API's records of a loaded graph (what reading the map file gives)."""
    nodes = {
        nid: Node(
            nid,
            NodeKind(data["kind"]),
            data.get("name") or nid,
            data.get("layer"),
            data.get("path"),
            data.get("line"),
            {k: v for k, v in data.items() if k not in _NODE_FIELDS},
        )
        for nid, data in graph.nodes()
    }
    edges = []
    for src, dst, key, data in graph.raw_edges():
        evidence = sorted(
            (Evidence(EvidenceKind(k), p, ln, c, d) for k, p, ln, c, d in data["evidence"]),
            key=evidence_rank,
        )
        extra = {k: v for k, v in data.items() if k not in _EDGE_FIELDS}
        edges.append(Edge(src, dst, EdgeKind(data["kind"]), tuple(evidence), key, extra))
    return Map(config, 0, nodes, edges)


def open_view(root: Path, config: StackmapConfig | None = None) -> MapView:
    """The current map of ``root``; MapNotIngested (a StoreError) when none was built."""
    return MapView(open_map(root, config))
