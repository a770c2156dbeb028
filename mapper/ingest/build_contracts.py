"""Contracts on the map: one interface node per contract entry, with who provides, consumes
and implements it.

An entry's ``symbol`` is implemented by the node :meth:`~mapper.ingest.resolve.Resolver.named`
finds (a re-exported name, an inherited member, an instance attribute: its class implements it;
a Python module: a format defined by a whole module is implemented by its file). The
implementing symbol's component provides the interface; every
other component calling it consumes it, with one evidence item per call site.
"""

from __future__ import annotations

from collections.abc import Mapping

from mapper.graph import MapGraph
from mapper.ingest.contracts import ContractFile
from mapper.ingest.resolve import Resolver
from mapper.model import EdgeAttrs, EdgeKind, EvidenceKind, NodeKind, Provenance


def build_contracts(
    graph: MapGraph, resolver: Resolver, contracts: Mapping[str, ContractFile]
) -> None:
    for path in sorted(contracts):
        cf = contracts[path]
        file_id = f"file:{path}"
        graph.add_node(
            file_id,
            NodeKind.FILE,
            path,
            path=path,
            line=1,
            language="yaml",
            contract=cf.id,
            version=cf.version,
            upper=cf.upper,
            lower=cf.lower,
            description=cf.description,
            constants=[[c.id, c.python, c.proto, c.c, c.location.line] for c in cf.constants],
        )
        for spec in cf.interfaces:
            iid = f"interface:{spec.id}"
            if iid in graph:
                continue
            sig = spec.signature
            graph.add_node(
                iid,
                NodeKind.INTERFACE,
                spec.id,
                layer=spec.lower,
                path=path,
                line=spec.location.line,
                contract=cf.id,
                interface_kind=spec.kind,
                symbol=spec.symbol,
                upper=spec.upper,
                lower=spec.lower,
                signature=sig.render() if sig else None,
                sync=spec.sync,
                synchronization=spec.synchronization,
                memory=spec.memory,
                errors=spec.errors,
                description=spec.description,
                version=cf.version,
                open_questions=[
                    [q.field, q.question, q.reason, q.location.line] for q in spec.unanswered()
                ],
            )
            where = spec.location
            graph.add_edge(
                file_id, iid, EdgeAttrs(EdgeKind.DEFINES, Provenance.CONTRACT, location=where)
            )
            graph.add_edge(
                f"layer:{spec.lower}",
                iid,
                EdgeAttrs(EdgeKind.PROVIDES, Provenance.CONTRACT, location=where),
            )
            graph.add_edge(
                f"layer:{spec.upper}",
                iid,
                EdgeAttrs(EdgeKind.CONSUMES, Provenance.CONTRACT, location=where),
            )
            impl = _implementer(graph, resolver, spec.symbol) if spec.symbol else None
            graph.add_node(iid, NodeKind.INTERFACE, spec.id, resolved=impl is not None)
            if impl is None:
                continue
            graph.add_edge(
                impl, iid, EdgeAttrs(EdgeKind.IMPLEMENTS, Provenance.CONTRACT, location=where)
            )
            provider = graph.node(impl).get("component")
            if provider:
                graph.add_edge(
                    f"component:{provider}",
                    iid,
                    EdgeAttrs(EdgeKind.PROVIDES, Provenance.CONTRACT, location=where),
                )
            for caller, data in sorted(graph.in_edges(impl, EdgeKind.CALLS), key=lambda e: e[0]):
                comp = graph.node(caller).get("component")
                if not comp or comp == provider:
                    continue
                prov = Provenance(data["provenance"])  # as sure as the calls it rests on
                for _kind, at, line, confidence, _detail in data["evidence"]:
                    graph.link(
                        f"component:{comp}",
                        iid,
                        EdgeKind.CONSUMES,
                        prov,
                        confidence,
                        at,
                        line,
                        evidence=EvidenceKind.CODE_REFERENCE,
                    )


def _implementer(graph: MapGraph, resolver: Resolver, name: str) -> str | None:
    """The node implementing a contract entry's ``symbol`` (see the module doc), if on the map."""
    node = resolver.named(name)
    return node if node is not None and node in graph else None
