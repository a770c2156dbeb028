"""The three questions (seed 003 §2.1): which layer, what is upstream, what is downstream.

Every component is asked all three. A declared component answers "upstream"/"downstream" by
its front matter (an explicit empty list is an answer: nothing is up/down stream) or by code
evidence (component → component ``calls``/``imports`` edges); an inferred one only by code
evidence. Its layer comes from front matter, the id prefix or the config globs. Docs that need
a layer (see :func:`mapper.ingest.build_docs.needs_layer`) and were not placed by embedding
similarity above the threshold are holes too. A component made only of generated code (the
config's ``generated`` globs) is indexed but asked nothing. A hole is recorded on its node (``hole``
attribute) and returned as :class:`~mapper.model.Hole` records, sorted by node id.

An interface whose contract entry lists open questions (a drafted contract: ``stackmap init
--contracts``) is a hole in each field a question is still open for, until someone writes it.
"""

from __future__ import annotations

from collections.abc import Mapping

from mapper.graph import MapGraph
from mapper.ingest.build_docs import needs_layer
from mapper.ingest.docs import DocPage
from mapper.model import EdgeKind, Hole, Location, NodeKind

_DEPENDENCY = (EdgeKind.CALLS, EdgeKind.IMPORTS)


def _linked(graph: MapGraph, node_id: str, outgoing: bool) -> list[str]:
    edges = graph.out_edges(node_id) if outgoing else graph.in_edges(node_id)
    found = {
        other
        for other, data in edges
        if data["kind"] in _DEPENDENCY and other.startswith("component:")
    }
    return sorted(found)


def _generated(graph: MapGraph, component: str) -> bool:
    """A component whose files all match the config's ``generated`` globs."""
    files = [
        graph.node(other)
        for other, data in graph.out_edges(component)
        if data["kind"] == EdgeKind.CONTAINS.value and other.startswith("file:")
    ]
    return bool(files) and all(f.get("generated") for f in files)


def find_holes(
    graph: MapGraph,
    docs: Mapping[str, DocPage],
    classified: Mapping[str, tuple[str | None, float]],
    threshold: float,
    embedded: bool,
) -> tuple[Hole, ...]:
    holes: list[Hole] = []
    for node_id, data in sorted(graph.nodes(NodeKind.COMPONENT)):
        if _generated(graph, node_id):
            continue
        page = docs.get(data.get("page") or "") if data.get("declared") else None
        fm = page.front_matter if page is not None else {}
        missing: list[str] = []
        reasons: list[str] = []
        if not data.get("layer"):
            missing.append("layer")
            reasons.append("no layer in front matter, id or config globs")
        upstream = _linked(graph, node_id, outgoing=False)
        downstream = _linked(graph, node_id, outgoing=True)
        graph.add_node(
            node_id, NodeKind.COMPONENT, data["name"], upstream=upstream, downstream=downstream
        )
        if "upstream" not in fm and not upstream:
            missing.append("upstream")
            reasons.append("nothing calls or imports it and no page names its upstream")
        if "downstream" not in fm and not downstream:
            missing.append("downstream")
            reasons.append(
                "it calls or imports no other component and no page names its downstream"
            )
        if missing:
            where = Location(data["path"], data.get("line")) if data.get("path") else None
            holes.append(Hole(node_id, tuple(missing), "; ".join(reasons), where))
    for path in sorted(docs):
        page = docs[path]
        if not needs_layer(page):
            continue
        layer, score = classified.get(path, (None, 0.0))
        if layer is not None and score >= threshold:
            continue
        if not embedded:
            reason = "no layer in front matter; not classified (embeddings off)"
        elif layer is None:
            reason = "no layer in front matter and no layer to compare with"
        else:
            reason = (
                f"no layer in front matter; closest layer {layer} at similarity "
                f"{score:.2f} < threshold {threshold:.2f}"
            )
        holes.append(Hole(f"doc:{path}", ("layer",), reason, Location(path, 1)))
    holes.extend(_open_questions(graph))
    for hole in holes:
        if hole.node in graph:
            graph.add_node(
                hole.node,
                NodeKind(graph.node(hole.node)["kind"]),
                graph.node(hole.node)["name"],
                hole={"missing": list(hole.missing), "reason": hole.reason},
            )
    return tuple(holes)


def _open_questions(graph: MapGraph) -> list[Hole]:
    """One hole per contract interface with unanswered open questions: their fields missing."""
    out = []
    for node_id, data in sorted(graph.nodes(NodeKind.INTERFACE)):
        questions = data.get("open_questions") or ()
        if not questions:
            continue
        reason = "; ".join(f"{field}: {question} ({why})" for field, question, why, _ in questions)
        where = Location(data["path"], questions[0][3]) if data.get("path") else None
        out.append(Hole(node_id, tuple(q[0] for q in questions), reason, where))
    return out
