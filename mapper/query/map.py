"""The opened map: node lookup, neighbours, and the questions every feature asks of it.

A :class:`Map` is immutable once opened and safe to share between threads. Every answer is made
of :class:`~mapper.model.Node` and :class:`~mapper.model.Edge` records, and every edge carries
its evidence, so a feature can always show why it says what it says.
"""

from __future__ import annotations

import threading
from collections import defaultdict, deque
from collections.abc import Collection, Iterable, Iterator, Sequence
from dataclasses import replace
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from mapper.config import StackmapConfig
from mapper.errors import StoreCorrupt, StoreError
from mapper.mapdb import MapFile
from mapper.model import Edge, EdgeKind, EvidenceKind, Hole, Location, Node, NodeKind
from mapper.query import paths as _paths
from mapper.query import touched as _touched

if TYPE_CHECKING:
    from mapper.check.finding import Finding

Direction = Literal["out", "in", "both"]


class Map:
    """One version of a repository's map, read-only. Open it with :func:`mapper.query.open_map`."""

    def __init__(
        self,
        config: StackmapConfig,
        version: int,
        nodes: dict[str, Node],
        edges: list[Edge],
        file: Path | None = None,
    ) -> None:
        self.config = config
        self.version = version
        self.file = file  # the map file it was read from (its sources are read from it)
        self._sources: dict[str, str | None] = {}
        self._sources_lock = threading.Lock()
        self._reader: MapFile | None = None  # opened on the first source read
        self._nodes = nodes
        self._out: dict[str, list[Edge]] = defaultdict(list)
        self._in: dict[str, list[Edge]] = defaultdict(list)
        for edge in edges:
            self._out[edge.source].append(edge)
            self._in[edge.target].append(edge)
        self._findings: tuple[Finding, ...] | None = None

    def __contains__(self, node_id: object) -> bool:
        return node_id in self._nodes

    def __len__(self) -> int:
        return len(self._nodes)

    # -- nodes -----------------------------------------------------------------------
    def node(self, node_id: str) -> Node | None:
        """The node with this id, or None."""
        return self._nodes.get(node_id)

    def resolve(self, raw: str) -> str:
        """``raw`` when it is a node id, else the one ``<kind>:raw`` on the map
        (``umd_kmd.free`` → ``interface:umd_kmd.free``); StoreError when none or several."""
        if raw in self._nodes:
            return raw
        found = [f"{k.value}:{raw}" for k in NodeKind if f"{k.value}:{raw}" in self._nodes]
        if len(found) == 1:
            return found[0]
        if found:
            raise StoreError(f"{raw!r} is ambiguous: {', '.join(found)}", node=raw)
        raise StoreError(f"no node {raw!r} on the map", node=raw)

    def nodes(
        self, kind: NodeKind | None = None, layer: str | None = None, path: str | None = None
    ) -> Iterator[Node]:
        """Nodes filtered by kind, layer and file path, in the order ingest added them."""
        for node in self._nodes.values():
            if kind is not None and node.kind is not kind:
                continue
            if (layer is not None and node.layer != layer) or (path and node.path != path):
                continue
            yield node

    def layers(self) -> list[str]:
        """The layer ids, top to bottom as the config orders them (``node(f"layer:{id}")``
        gives each layer's name and description)."""
        found = sorted(self.nodes(NodeKind.LAYER), key=lambda n: int(n.get("index", 0)))
        return [n.id.removeprefix("layer:") for n in found]

    def source(self, path: str) -> str | None:
        """The text of the file ``path`` as this map was built from it, read from the map file
        once, through one connection kept for these reads (None for a file the map holds no
        text of, or a map not read from a file that still exists). StoreCorrupt when the map
        file is damaged."""
        with self._sources_lock:
            if path not in self._sources:
                if self._reader is None:
                    if self.file is None or not self.file.exists():
                        return None
                    self._reader = MapFile(self.file, shared=True)
                try:
                    self._sources[path] = self._reader.source(path)
                except StoreCorrupt:
                    self._reader = None  # the failed read closed it
                    raise
            return self._sources[path]

    # -- edges -----------------------------------------------------------------------
    def edges(self, kind: EdgeKind | None = None) -> Iterator[Edge]:
        for edges in self._out.values():
            yield from (e for e in edges if kind is None or e.kind is kind)

    def neighbours(
        self,
        node_id: str,
        kinds: Collection[EdgeKind] | None = None,
        direction: Direction = "out",
        evidence: Collection[EvidenceKind] | None = None,
    ) -> list[Edge]:
        """The edges at ``node_id``: outgoing (``"out"``, the default), incoming (``"in"``) or
        both, of the given kinds (all when None). With ``evidence``, each edge keeps only the
        evidence of those kinds, and edges left with none are dropped."""
        found: list[Edge] = []
        if direction in ("out", "both"):
            found += self._out.get(node_id, ())
        if direction in ("in", "both"):
            found += self._in.get(node_id, ())
        if kinds is not None:
            found = [e for e in found if e.kind in kinds]
        if evidence is not None:
            kept = ((e, tuple(ev for ev in e.evidence if ev.kind in evidence)) for e in found)
            found = [replace(e, evidence=items) for e, items in kept if items]
        return found

    def neighbourhood(
        self, node_id: str, hops: int = 1, kinds: Collection[EdgeKind] | None = None
    ) -> dict[str, int]:
        """Every node within ``hops`` edges of ``node_id`` (either direction) → its distance."""
        seen = {node_id: 0}
        queue = deque([node_id])
        while queue:
            current = queue.popleft()
            if seen[current] == hops:
                continue
            for edge in self.neighbours(current, kinds, "both"):
                other = edge.target if edge.source == current else edge.source
                if other not in seen:
                    seen[other] = seen[current] + 1
                    queue.append(other)
        return seen

    # -- explanations ----------------------------------------------------------------
    def paths(
        self, src: str, dst: str, k: int = 1, precise: bool = False
    ) -> list[_paths.ExplanationPath]:
        """Up to ``k`` cheapest explanation paths from ``src`` to ``dst``, cheapest first; each
        hop cites its edge's strongest evidence. ``precise`` leaves out edges resting only on
        similarity, an LLM or a guess below 0.8 confidence. Empty when they are unconnected."""
        return _paths.find(self, src, dst, k, precise)

    @cached_property
    def _path_graphs(self) -> dict[bool, _paths.UndirectedView]:
        return {precise: _paths.view(self, precise) for precise in (False, True)}

    # -- interfaces ------------------------------------------------------------------
    def providers(self, interface_id: str) -> list[Edge]:
        """``provides`` edges into the interface (``edge.source`` is the layer or component)."""
        return self.neighbours(interface_id, {EdgeKind.PROVIDES}, "in")

    def consumers(self, interface_id: str) -> list[Edge]:
        """``consumes`` edges into the interface (``edge.source`` is the layer or component)."""
        return self.neighbours(interface_id, {EdgeKind.CONSUMES}, "in")

    def implementations(self, interface_id: str) -> list[Edge]:
        """``implements`` edges into the interface (``edge.source`` is the symbol)."""
        return self.neighbours(interface_id, {EdgeKind.IMPLEMENTS}, "in")

    def interfaces_between(self, upper: str, lower: str) -> list[Node]:
        """The interfaces ``upper`` consumes from ``lower`` (layer ids), by id."""
        found = [
            n
            for n in self.nodes(NodeKind.INTERFACE)
            if n.get("upper") == upper and n.get("lower") == lower
        ]
        return sorted(found, key=lambda n: n.id)

    # -- holes, findings, changes ----------------------------------------------------
    def holes(self) -> list[Hole]:
        """Nodes that fail one of the three questions (layer, upstream, downstream), by id."""
        found = []
        for node in self._nodes.values():
            hole = node.get("hole")
            if hole:
                where = Location(node.path, node.line) if node.path else None
                found.append(Hole(node.id, tuple(hole["missing"]), hole["reason"], where))
        return sorted(found, key=lambda h: h.node)

    def findings(self, node_id: str | None = None) -> list[Finding]:
        """The check findings of this map (all rules), or those about ``node_id``."""
        if self._findings is None:
            from mapper.query.findings import check_map

            self._findings = check_map(self)
        return [f for f in self._findings if node_id is None or node_id in f.nodes]

    def nodes_touched(self, path: str, ranges: Iterable[Sequence[int]]) -> list[Node]:
        """Definitions in ``path`` whose line span overlaps one of the ``(start, end)`` ranges
        (inclusive), innermost first; files themselves are not definitions."""
        return _touched.nodes_touched(self, path, ranges)

    @cached_property
    def _spans(self) -> dict[str, list[tuple[int, int, Node]]]:
        return _touched.spans(self)
