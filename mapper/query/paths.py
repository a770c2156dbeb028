"""Explanation paths: the cheapest chains of edges joining two nodes, each hop with a citation.

Edges are walked in either direction (a hop says which). A hop's cost favours what the code
shows over what structure implies: code relations (calls, imports, implements, provides,
consumes, inherits, overrides, references, registers) cost 1, doc/test/scenario links 2,
containment and definition 2, layer adjacency 3, plus ``1 - confidence``. Between two nodes,
the cheapest of their edges stands for the pair. ``k`` paths are found with Yen's algorithm
(networkx ``shortest_simple_paths``); they share no identical node sequence.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeAlias

import networkx as nx

from mapper.errors import StoreError
from mapper.model import Edge, EdgeKind, Evidence, EvidenceKind

if TYPE_CHECKING:
    from mapper.query.map import Map

UndirectedView: TypeAlias = nx.Graph
_COST = {
    EdgeKind.CONTAINS: 2.0,
    EdgeKind.DEFINES: 2.0,
    EdgeKind.DESCRIBES: 2.0,
    EdgeKind.COVERS: 2.0,
    EdgeKind.STEP: 2.0,
    EdgeKind.ADJACENT: 3.0,
}
_VAGUE = frozenset({EvidenceKind.SIMILARITY, EvidenceKind.LLM})
PRECISE_CONFIDENCE = 0.8


@dataclass(frozen=True, slots=True)
class Hop:
    """One step of a path: the edge taken, its strongest evidence, and whether it was walked
    along the edge (``"forward"``: from ``edge.source``) or against it (``"backward"``)."""

    edge: Edge
    citation: Evidence
    direction: Literal["forward", "backward"]

    @property
    def start(self) -> str:
        return self.edge.source if self.direction == "forward" else self.edge.target

    @property
    def end(self) -> str:
        return self.edge.target if self.direction == "forward" else self.edge.source

    def render(self) -> str:
        arrow = (
            f"-[{self.edge.kind.value}]->"
            if self.direction == "forward"
            else (f"<-[{self.edge.kind.value}]-")
        )
        return f"{self.start} {arrow} {self.end}  {self.citation.cite()}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "from": self.start,
            "to": self.end,
            "direction": self.direction,
            "edge": self.edge.to_dict(),
            "citation": self.citation.to_dict(),
        }


@dataclass(frozen=True, slots=True)
class ExplanationPath:
    """A chain of hops from ``hops[0].start`` to ``hops[-1].end``; ``cost`` as described above."""

    hops: tuple[Hop, ...]
    cost: float

    @property
    def nodes(self) -> tuple[str, ...]:
        return (self.hops[0].start, *(h.end for h in self.hops)) if self.hops else ()

    def render(self) -> str:
        return "\n".join(h.render() for h in self.hops)

    def to_dict(self) -> dict[str, Any]:
        return {
            "nodes": list(self.nodes),
            "cost": self.cost,
            "hops": [h.to_dict() for h in self.hops],
        }


def cost(edge: Edge) -> float:
    return _COST.get(edge.kind, 1.0) + round(1.0 - edge.confidence, 4)


def _precise(edge: Edge) -> bool:
    return any(e.kind not in _VAGUE and e.confidence >= PRECISE_CONFIDENCE for e in edge.evidence)


def view(m: Map, precise: bool) -> UndirectedView:
    """The undirected weighted graph paths are searched on (the cheapest edge per pair)."""
    graph = nx.Graph()
    for edge in m.edges():
        if precise and not _precise(edge):
            continue
        weight = cost(edge)
        known = graph.get_edge_data(edge.source, edge.target)
        if known is None or weight < known["weight"]:
            graph.add_edge(edge.source, edge.target, weight=weight, edge=edge)
    return graph


def find(m: Map, src: str, dst: str, k: int = 1, precise: bool = False) -> list[ExplanationPath]:
    """See :meth:`mapper.query.map.Map.paths`; StoreError when an end is not on the map."""
    for end in (src, dst):
        if end not in m:
            raise StoreError(f"no node {end!r} on the map", node=end)
    if k < 1:
        return []
    graph = m._path_graphs[precise]
    if src == dst or src not in graph or dst not in graph:
        return []
    try:
        if k == 1:
            routes = [nx.bidirectional_dijkstra(graph, src, dst, weight="weight")[1]]
        else:
            found = nx.shortest_simple_paths(graph, src, dst, weight="weight")
            routes = list(itertools.islice(found, k))
    except nx.NetworkXNoPath:
        return []
    return [_explain(graph, route) for route in routes]


def _explain(graph: UndirectedView, route: list[str]) -> ExplanationPath:
    hops = []
    total = 0.0
    for a, b in itertools.pairwise(route):
        data = graph.edges[a, b]
        edge: Edge = data["edge"]
        total += data["weight"]
        hops.append(Hop(edge, edge.citation, "forward" if edge.source == a else "backward"))
    return ExplanationPath(tuple(hops), round(total, 4))
