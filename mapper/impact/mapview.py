"""The one place impact and the scenario walks read the map: the query API's shape.

Impact and the walks speak only to :class:`MapView`: ``node``, ``nodes``, ``neighbours``
(edges carrying every piece of their evidence), ``nodes_touched`` and ``layers``, the calls of
the map's query API. This module adapts the persisted graph to that shape; nothing here (or in
the features above it) reads the repository's files.

Each edge of the persisted graph becomes an :class:`Edge` whose evidence kind follows from
its kind and provenance: code edges (calls, defines, contains from the parser) are
``code_reference``, imports and includes ``import``, test calls ``test_coverage``, contract
claims ``contract``, front-matter claims ``doc_front_matter``, mentions in a page's text
``doc_mention``, embedding placements ``similarity`` and model claims ``llm``.
"""

from __future__ import annotations

import bisect
import enum
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mapper.config import StackmapConfig, load_config
from mapper.graph import MapGraph
from mapper.model import EdgeKind, NodeKind


class EvidenceKind(enum.StrEnum):
    CODE_REFERENCE = "code_reference"
    IMPORT = "import"
    REGISTRATION = "registration"
    INHERITANCE = "inheritance"
    CONTRACT = "contract"
    DOC_FRONT_MATTER = "doc_front_matter"
    DOC_MENTION = "doc_mention"
    TEST_COVERAGE = "test_coverage"
    SIMILARITY = "similarity"
    LLM = "llm"


#: Evidence the code itself gives: what ``--precise`` follows.
CODE_EVIDENCE = frozenset(
    {
        EvidenceKind.CODE_REFERENCE,
        EvidenceKind.IMPORT,
        EvidenceKind.REGISTRATION,
        EvidenceKind.INHERITANCE,
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
    EvidenceKind.REGISTRATION: 6,
    EvidenceKind.INHERITANCE: 7,
    EvidenceKind.CONTRACT: 8,
    EvidenceKind.CODE_REFERENCE: 9,
}


@dataclass(frozen=True, slots=True)
class Evidence:
    kind: EvidenceKind
    path: str | None
    line: int | None
    confidence: float
    detail: str = ""

    def cite(self) -> str:
        where = self.path or "-"
        return f"{where}:{self.line}" if self.line is not None else where


@dataclass(frozen=True, slots=True)
class Node:
    id: str
    kind: NodeKind
    name: str
    layer: str | None
    path: str | None
    line: int | None
    attrs: Mapping[str, Any]

    def attr(self, key: str) -> Any:
        return self.attrs.get(key)


@dataclass(frozen=True, slots=True)
class Edge:
    source: str
    target: str
    kind: EdgeKind
    evidence: tuple[Evidence, ...]

    @property
    def strongest(self) -> Evidence:
        return max(self.evidence, key=lambda e: (STRENGTH[e.kind], e.confidence))


_CORE = ("kind", "name", "layer", "path", "line")
_DOC_KINDS = {"describes", "step", "calls", "consumes", "contains"}


def _evidence_kind(kind: str, data: Mapping[str, Any]) -> EvidenceKind:
    prov = data.get("provenance")
    if prov == "embedding":
        return EvidenceKind.SIMILARITY
    if prov == "llm":
        return EvidenceKind.LLM
    if prov == "contract":
        return EvidenceKind.CONTRACT
    if prov == "doc" and kind in _DOC_KINDS:
        mention = kind == "describes" and data.get("confidence", 1.0) < 1.0
        return EvidenceKind.DOC_MENTION if mention else EvidenceKind.DOC_FRONT_MATTER
    if kind == "imports":
        return EvidenceKind.IMPORT
    if kind == "covers":
        return EvidenceKind.TEST_COVERAGE
    if kind in ("inherits", "overrides"):
        return EvidenceKind.INHERITANCE
    if kind == "registers":
        return EvidenceKind.REGISTRATION
    return EvidenceKind.CODE_REFERENCE


class MapView:
    """Read-only queries over one version of the map (the query API's calls impact uses)."""

    def __init__(self, graph: MapGraph, config: StackmapConfig) -> None:
        self._g = graph.nx
        self.config = config
        self._nodes: dict[str, Node] = {}
        self._by_path: dict[str, list[tuple[int, int, str]]] | None = None

    # -- nodes ---------------------------------------------------------------------------
    def node(self, node_id: str) -> Node | None:
        cached = self._nodes.get(node_id)
        if cached is not None:
            return cached
        data = self._g._node.get(node_id)
        if data is None:
            return None
        made = Node(
            node_id,
            NodeKind(data["kind"]),
            data.get("name") or node_id,
            data.get("layer"),
            data.get("path"),
            data.get("line"),
            {k: v for k, v in data.items() if k not in _CORE},
        )
        self._nodes[node_id] = made
        return made

    def nodes(self, kind: NodeKind | None = None, layer: str | None = None) -> Iterator[Node]:
        for node_id, data in self._g._node.items():
            if kind is not None and data.get("kind") != kind.value:
                continue
            if layer is not None and data.get("layer") != layer:
                continue
            found = self.node(node_id)
            if found is not None:
                yield found

    def layers(self) -> list[str]:
        return [layer.id for layer in self.config.layers]

    # -- edges ---------------------------------------------------------------------------
    def neighbours(
        self,
        node_id: str,
        kinds: Iterable[EdgeKind] | None = None,
        direction: str = "out",
        evidence: Iterable[EvidenceKind] | None = None,
    ) -> list[Edge]:
        """Edges at ``node_id`` (``out``, ``in`` or ``both``), of the given kinds, keeping
        only evidence of the given kinds (an edge left without evidence is dropped)."""
        wanted = {k.value for k in kinds} if kinds is not None else None
        allowed = set(evidence) if evidence is not None else None
        out: list[Edge] = []
        sides = []
        if direction in ("out", "both") and node_id in self._g._succ:
            sides.append((self._g._succ[node_id], True))
        if direction in ("in", "both") and node_id in self._g._pred:
            sides.append((self._g._pred[node_id], False))
        for adjacency, outgoing in sides:
            for other, keydict in adjacency.items():
                for data in keydict.values():
                    kind = data["kind"]
                    if wanted is not None and kind not in wanted:
                        continue
                    ev = Evidence(
                        _evidence_kind(kind, data),
                        data.get("path"),
                        data.get("line"),
                        float(data.get("confidence", 1.0)),
                        str(data.get("action") or ""),
                    )
                    if allowed is not None and ev.kind not in allowed:
                        continue
                    src, dst = (node_id, other) if outgoing else (other, node_id)
                    if ev.path is None:  # structural: cite the definition it rests on
                        ev = self._cited_at(ev, dst if kind in ("defines", "contains") else src)
                    out.append(Edge(src, dst, EdgeKind(kind), (ev,)))
        return out

    def _cited_at(self, ev: Evidence, node_id: str) -> Evidence:
        """A structural edge without a location is evidenced where its target is defined."""
        data = self._g._node.get(node_id, {})
        return Evidence(ev.kind, data.get("path"), data.get("line"), ev.confidence, ev.detail)

    # -- locations -----------------------------------------------------------------------
    def nodes_touched(self, path: str, ranges: Iterable[tuple[int, int]]) -> list[Node]:
        """Definitions (symbols, tests, interfaces) in ``path`` whose span overlaps a range;
        innermost first."""
        spans = self._spans().get(path, [])
        starts = [s for s, _, _ in spans]
        hits: dict[str, tuple[int, int]] = {}
        for lo, hi in ranges:
            i = bisect.bisect_right(starts, hi)
            for start, end, node_id in spans[:i]:
                if end >= lo:
                    hits[node_id] = (start, end)
        ordered = sorted(hits, key=lambda n: (hits[n][1] - hits[n][0], n))
        return [n for n in (self.node(i) for i in ordered) if n is not None]

    def definitions_at(self, path: str, line: int) -> list[Node]:
        """Definitions whose span contains ``line``, innermost first."""
        return self.nodes_touched(path, [(line, line)])

    def _spans(self) -> dict[str, list[tuple[int, int, str]]]:
        if self._by_path is None:
            by_path: dict[str, list[tuple[int, int, str]]] = {}
            for node_id, data in self._g._node.items():
                if data.get("kind") not in ("symbol", "test", "interface"):
                    continue
                path, line = data.get("path"), data.get("line")
                if not path or not line:
                    continue
                end = data.get("end_line") or line
                by_path.setdefault(path, []).append((line, max(end, line), node_id))
            for spans in by_path.values():
                spans.sort()
            self._by_path = by_path
        return self._by_path


def open_view(root: Path, config: StackmapConfig | None = None) -> MapView:
    """The current map of ``root``; StoreError when none was built (run ``stackmap ingest``)."""
    from mapper.ingest import load_map

    config = config or load_config(root)
    return MapView(load_map(root, config), config)
