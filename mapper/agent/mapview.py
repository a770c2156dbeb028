"""The agent's one window on the map: the query API's shape over the persisted graph.

Everything the agent knows it reads through :class:`MapView` — node, nodes, neighbours,
paths with citations, providers/consumers/implementations, interfaces between layers, holes,
findings and hybrid search — with the records of the agreed query API (``Node``, ``Edge``,
``Evidence``, ``Hop``). When the map's own query package lands, this module is the only one
that changes. Nothing here walks the repository's files: it opens the stored map once per
map version and answers from memory. Read-only; safe to share between threads once opened.
"""

from __future__ import annotations

import enum
import threading
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mapper.config import RoleConfig, StackmapConfig, load_config
from mapper.errors import MapNotIngested, StoreError, UnknownNameError
from mapper.graph import MapGraph
from mapper.model import EdgeKind, NodeKind
from mapper.search import SearchHit, search_graph


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


#: Evidence that the code shows (observed) against what docs and contracts say (declared).
OBSERVED = frozenset({EvidenceKind.CODE_REFERENCE, EvidenceKind.IMPORT, EvidenceKind.REGISTRATION})
DECLARED = frozenset(
    {EvidenceKind.CONTRACT, EvidenceKind.DOC_FRONT_MATTER, EvidenceKind.DOC_MENTION}
)


@dataclass(frozen=True, slots=True)
class Node:
    id: str
    kind: str
    name: str
    layer: str | None
    path: str | None
    line: int | None
    attrs: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Evidence:
    kind: EvidenceKind
    path: str | None
    line: int | None
    confidence: float
    detail: str = ""


@dataclass(frozen=True, slots=True)
class Edge:
    source: str
    target: str
    kind: EdgeKind
    evidence: tuple[Evidence, ...]

    @property
    def strongest(self) -> Evidence:
        return max(self.evidence, key=lambda e: (e.confidence, e.path is not None))


@dataclass(frozen=True, slots=True)
class Hop:
    edge: Edge
    citation: Evidence
    direction: str  # "out" when walked source → target, "in" when walked against it


_WALKABLE = frozenset(
    {
        EdgeKind.CALLS,
        EdgeKind.CONSUMES,
        EdgeKind.PROVIDES,
        EdgeKind.IMPLEMENTS,
        EdgeKind.CONTAINS,
        EdgeKind.ADJACENT,
        EdgeKind.STEP,
        EdgeKind.IMPORTS,
    }
)


def _evidence(kind: EdgeKind, data: Mapping[str, Any]) -> Evidence:
    prov = data.get("provenance")
    if prov == "contract":
        ek = EvidenceKind.CONTRACT
    elif prov in ("doc", "config"):
        ek = (
            EvidenceKind.DOC_FRONT_MATTER
            if data.get("confidence", 1.0) >= 1.0
            else (EvidenceKind.DOC_MENTION)
        )
    elif kind is EdgeKind.COVERS:
        ek = EvidenceKind.TEST_COVERAGE
    elif prov == "embedding":
        ek = EvidenceKind.SIMILARITY
    elif prov == "llm":
        ek = EvidenceKind.LLM
    elif kind is EdgeKind.IMPORTS:
        ek = EvidenceKind.IMPORT
    else:
        ek = EvidenceKind.CODE_REFERENCE
    return Evidence(ek, data.get("path"), data.get("line"), float(data.get("confidence", 1.0)))


class MapView:
    """The stored map of one repository, opened for questions."""

    def __init__(self, root: Path, config: StackmapConfig, graph: MapGraph) -> None:
        self.root = root
        self.config = config
        self.graph = graph
        self._index: Any = None
        self._embedded: bool | None = None

    # -- nodes -----------------------------------------------------------------------
    def node(self, node_id: str) -> Node | None:
        data = self.graph.get(node_id)
        if data is None:
            return None
        return Node(
            node_id,
            str(data.get("kind")),
            str(data.get("name") or node_id),
            data.get("layer"),
            data.get("path"),
            data.get("line"),
            data,
        )

    def nodes(self, kind: NodeKind | None = None, layer: str | None = None) -> Iterator[Node]:
        for node_id, _ in self.graph.nodes(kind, layer):
            found = self.node(node_id)
            if found is not None:
                yield found

    def layers(self) -> list[str]:
        return [layer.id for layer in self.config.layers]

    def role(self, role_id: str) -> RoleConfig:
        return role_of(self.config, role_id)

    # -- edges -----------------------------------------------------------------------
    def neighbours(
        self,
        node_id: str,
        kinds: Iterable[EdgeKind] | None = None,
        direction: str = "both",
    ) -> list[Edge]:
        wanted = {k.value for k in kinds} if kinds is not None else None
        out: list[Edge] = []
        if node_id not in self.graph:
            return out
        nxg = self.graph.nx
        if direction in ("out", "both"):
            for dst, keyed in nxg._succ[node_id].items():
                out.extend(self._edges(node_id, dst, keyed, wanted))
        if direction in ("in", "both"):
            for src, keyed in nxg._pred[node_id].items():
                out.extend(self._edges(src, node_id, keyed, wanted))
        return out

    @staticmethod
    def _edges(
        src: str, dst: str, keyed: Mapping[str, Mapping[str, Any]], wanted: set[str] | None
    ) -> Iterator[Edge]:
        for data in keyed.values():
            if wanted is None or data["kind"] in wanted:
                kind = EdgeKind(data["kind"])
                yield Edge(src, dst, kind, (_evidence(kind, data),))

    def providers(self, interface_id: str) -> list[Edge]:
        return self.neighbours(interface_id, {EdgeKind.PROVIDES}, "in")

    def consumers(self, interface_id: str) -> list[Edge]:
        return self.neighbours(interface_id, {EdgeKind.CONSUMES}, "in")

    def implementations(self, interface_id: str) -> list[Edge]:
        return self.neighbours(interface_id, {EdgeKind.IMPLEMENTS}, "in")

    def interfaces_between(self, upper: str, lower: str) -> list[Node]:
        found = [
            n
            for n in self.nodes(NodeKind.INTERFACE)
            if n.attrs.get("upper") == upper and n.attrs.get("lower") == lower
        ]
        return sorted(found, key=lambda n: (n.path or "", n.line or 0))

    def paths(self, src: str, dst: str, *, max_hops: int = 8) -> list[tuple[Hop, ...]]:
        """The shortest explanation path from ``src`` to ``dst`` over calls, contracts,
        containment and scenario steps, walking edges either way; [] when none."""
        if src not in self.graph or dst not in self.graph or src == dst:
            return []
        prev: dict[str, Hop | None] = {src: None}
        queue = deque([(src, 0)])
        while queue:
            here, depth = queue.popleft()
            if here == dst:
                break
            if depth >= max_hops:
                continue
            for edge in self.neighbours(here, _WALKABLE):
                there = edge.target if edge.source == here else edge.source
                kind = self.graph.nx._node[there].get("kind")
                if there in prev or kind == "file" or (kind == "layer" and there != dst):
                    continue
                direction = "out" if edge.source == here else "in"
                prev[there] = Hop(edge, edge.strongest, direction)
                queue.append((there, depth + 1))
        if dst not in prev:
            return []
        hops: list[Hop] = []
        cursor = dst
        while (hop := prev[cursor]) is not None:
            hops.append(hop)
            cursor = hop.edge.source if hop.direction == "out" else hop.edge.target
        return [tuple(reversed(hops))]

    # -- map health --------------------------------------------------------------------
    def holes(self) -> list[Node]:
        return [n for n in self.nodes() if n.attrs.get("hole")]

    def findings(self, node_id: str | None = None) -> list[dict[str, Any]]:
        """What the stored map flags as disagreeing with the code: holes and contract
        interfaces whose symbol did not resolve (the full rule set runs in ``stackmap check``)."""
        rows: list[dict[str, Any]] = []
        for n in self.nodes():
            if node_id is not None and n.id != node_id:
                continue
            hole = n.attrs.get("hole")
            if hole:
                rows.append({"node": n.id, "finding": "hole", "detail": hole})
            if n.kind == "interface" and n.attrs.get("resolved") is False:
                symbol = n.attrs.get("symbol")
                rows.append({"node": n.id, "finding": "unresolved symbol", "detail": symbol})
        return rows

    # -- search --------------------------------------------------------------------------
    def search(self, query: str, *, limit: int = 8, kind: str | None = None) -> list[SearchHit]:
        if self._embedded is None:
            from mapper.ingest.store import Store

            try:
                self._embedded = bool(Store(self.config.store_path).report().get("embedded"))
            except StoreError:
                self._embedded = False
        if self._embedded and self._index is None:
            from mapper.index import VectorIndex

            self._index = VectorIndex.for_config(self.config)
        return search_graph(
            self.graph, self.config, query, limit=limit, kind=kind, index=self._index
        )


def role_of(config: StackmapConfig, role_id: str) -> RoleConfig:
    """A role of the config; UnknownNameError listing the known ones."""
    for role in config.roles:
        if role.id == role_id:
            return role
    raise UnknownNameError("role", role_id, [r.id for r in config.roles])


_CACHE: dict[tuple[str, str], tuple[float, MapView]] = {}
_LOCK = threading.Lock()


def open_view(root: Path, config: StackmapConfig | None = None) -> MapView:
    """The current map of ``root``, cached per map version; StoreError naming the command to
    run when no map has been built."""
    from mapper.ingest.store import Store

    config = config or load_config(root)
    store = Store(config.store_path)
    try:
        path = store.map_path()
    except MapNotIngested:
        raise StoreError(
            f"no map of {root} yet; run `stackmap ingest {root}` first",
            path=str(config.store_path),
        ) from None
    key = (str(root.resolve()), str(path))
    stamp = path.stat().st_mtime
    with _LOCK:
        cached = _CACHE.get(key)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        view = MapView(root, config, store.load_graph())
        _CACHE[key] = (stamp, view)
        return view
