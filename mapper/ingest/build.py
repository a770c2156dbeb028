"""Build the MapGraph from parse results: layers, components, files, symbols, calls, tests.

Pure and deterministic: the same records (in any order) give the same graph, which is what
makes an incremental ingest equal a from-scratch one. Docs, scenarios and contracts are added
by :mod:`mapper.ingest.build_docs`; the three questions are asked by :mod:`mapper.ingest.holes`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mapper.config import StackmapConfig
from mapper.graph import MapGraph
from mapper.ingest.bindings import add_bindings, arg_struct
from mapper.ingest.build_relations import add_inheritance, add_relations
from mapper.ingest.build_tests import add_tests
from mapper.ingest.code import ParsedFile
from mapper.ingest.compile_db import include_paths
from mapper.ingest.components import DeclaredComponent, component_of, declared_components
from mapper.ingest.contracts import ContractFile
from mapper.ingest.docs import DocPage
from mapper.ingest.receivers import record_loose_calls
from mapper.ingest.resolve import Resolver
from mapper.model import (
    EdgeAttrs,
    EdgeKind,
    EvidenceKind,
    Language,
    Location,
    NodeKind,
    Provenance,
    Symbol,
    SymbolKind,
)

TC = Provenance.TREE_SITTER


@dataclass(slots=True)
class Inputs:
    """Parse results by path, split by what they are."""

    code: dict[str, ParsedFile] = field(default_factory=dict)  # layered code and protos
    tests: dict[str, ParsedFile] = field(default_factory=dict)
    docs: dict[str, DocPage] = field(default_factory=dict)
    contracts: dict[str, ContractFile] = field(default_factory=dict)


def symbol_attrs(sym: Symbol) -> dict[str, Any]:
    """A symbol node's own attributes (JSON values)."""
    sig = sym.signature
    return {
        "symbol_kind": sym.kind.value,
        "language": sym.language.value,
        "qualname": sym.qualname,
        "signature": sig.render() if sig else None,
        "params": [[p.name, p.type, p.default, p.kind] for p in sig.params] if sig else None,
        "returns": sig.returns if sig else None,
        "is_async": sig.is_async if sig else False,
        "value": sym.value,
        "end_line": sym.end_line,
        "doc": sym.doc,
    }


_PARENT_KINDS = frozenset(
    {SymbolKind.CLASS, SymbolKind.STRUCT, SymbolKind.MESSAGE, SymbolKind.ENUM, SymbolKind.SERVICE}
)


def build_code(config: StackmapConfig, inputs: Inputs, graph: MapGraph) -> Resolver:
    """Layers, components, files, symbols, imports, calls and tests."""
    for i, layer in enumerate(config.layers):
        graph.add_node(
            f"layer:{layer.id}",
            NodeKind.LAYER,
            layer.name,
            layer=layer.id,
            description=layer.description,
            index=i,
            paths=list(layer.paths),
        )
    for upper, lower in zip(config.layers, config.layers[1:], strict=False):
        graph.add_edge(
            f"layer:{upper.id}",
            f"layer:{lower.id}",
            EdgeAttrs(EdgeKind.ADJACENT, Provenance.CONFIG),
        )
    declared = declared_components(config, inputs.docs)
    for comp in declared.values():
        graph.add_node(
            f"component:{comp.id}",
            NodeKind.COMPONENT,
            comp.id,
            layer=comp.layer,
            path=comp.page,
            line=1,
            paths=list(comp.paths),
            declared=True,
            page=comp.page,
            description=inputs.docs[comp.page].title,
        )
        if comp.layer:
            graph.add_edge(
                f"layer:{comp.layer}",
                f"component:{comp.id}",
                EdgeAttrs(EdgeKind.CONTAINS, Provenance.DOC, location=Location(comp.page, 1)),
            )
    resolver = Resolver([*inputs.code.values(), *inputs.tests.values()], include_paths(config))
    owner: dict[str, str | None] = {}
    for path in sorted(inputs.code):
        owner[path] = _add_file(config, graph, inputs.code[path], declared)
    for path in sorted(inputs.code):
        add_inheritance(graph, resolver, inputs.code[path])
    for path in sorted(inputs.code):
        _add_references(graph, resolver, inputs.code[path], owner)
    for path in sorted(inputs.code):
        add_relations(graph, resolver, inputs.code[path])
    add_bindings(graph, resolver, [inputs.code[path] for path in sorted(inputs.code)])
    for path in sorted(inputs.tests):
        add_tests(graph, resolver, inputs.tests[path])
    for pf in [*inputs.code.values(), *inputs.tests.values()]:
        record_loose_calls(graph, resolver, pf)
    _component_dependencies(graph)
    return resolver


def _add_file(
    config: StackmapConfig,
    graph: MapGraph,
    pf: ParsedFile,
    declared: Mapping[str, DeclaredComponent],
) -> str | None:
    layer = config.layer_of(pf.path)
    comp, prov = component_of(config, pf.path, declared)
    file_id = f"file:{pf.path}"
    graph.add_node(
        file_id,
        NodeKind.FILE,
        pf.path,
        layer=layer,
        path=pf.path,
        line=1,
        language=pf.language.value,
        loc=pf.loc,
        component=comp,
        module=pf.module,
        warnings=list(pf.warnings),
        generated=config.is_generated(pf.path) or None,
    )
    if comp is not None:
        cid = f"component:{comp}"
        if cid not in graph:
            graph.add_node(
                cid, NodeKind.COMPONENT, comp, layer=layer, path=pf.path, line=1, declared=False
            )
            if layer:
                graph.add_edge(
                    f"layer:{layer}", cid, EdgeAttrs(EdgeKind.CONTAINS, Provenance.CONFIG)
                )
        graph.add_edge(cid, file_id, EdgeAttrs(EdgeKind.CONTAINS, prov))
    elif layer is not None:
        graph.add_edge(f"layer:{layer}", file_id, EdgeAttrs(EdgeKind.CONTAINS, Provenance.CONFIG))
    prov_def = Provenance.PROTOC if pf.path.endswith(".proto") else TC
    parents: dict[str, str] = {}
    for sym in pf.symbols:
        node_id = sym.node_id
        if node_id in graph:
            continue
        extra = {"arg_struct": arg_struct(sym.value)} if sym.kind is SymbolKind.IOCTL else {}
        graph.add_node(
            node_id,
            NodeKind.SYMBOL,
            sym.qualname,
            layer=layer,
            path=pf.path,
            line=sym.location.line,
            component=comp,
            **symbol_attrs(sym),
            **extra,
        )
        graph.link(file_id, node_id, EdgeKind.DEFINES, prov_def)
        if sym.kind in _PARENT_KINDS:
            parents[sym.qualname] = node_id
    if parents:
        sep = "." if pf.language in (Language.PYTHON, Language.PROTO) else "::"
        for sym in pf.symbols:
            head = sym.qualname.rpartition(sep)[0]
            if head in parents:
                graph.link(parents[head], sym.node_id, EdgeKind.CONTAINS, prov_def)
    return comp


def _add_references(
    graph: MapGraph, resolver: Resolver, pf: ParsedFile, owner: Mapping[str, str | None]
) -> None:
    file_id = f"file:{pf.path}"
    python = pf.language is Language.PYTHON
    scope_prefix = "symbol:" if python else f"symbol:c:{pf.path}:"
    for ref in pf.references:
        kind = ref.kind
        if kind == "call":
            found = resolver.call(pf, ref)
            if found is None:
                continue
            sym, confidence = found
            prov = TC if confidence >= 0.8 else Provenance.INFERRED
            where = ref.location
            graph.link(
                scope_prefix + ref.scope if ref.scope else file_id,
                sym.node_id,
                EdgeKind.CALLS,
                prov,
                confidence,
                where.path,
                where.line,
            )
        elif kind == "import" or kind == "include":
            target = resolver.import_file(pf, ref)
            if target is not None:
                where = ref.location
                graph.link(
                    file_id, f"file:{target}", EdgeKind.IMPORTS, TC, 1.0, where.path, where.line
                )


def _component_dependencies(graph: MapGraph) -> None:
    """Cross-component imports and calls lifted to component → component edges, one evidence
    item per code site under them (in source order)."""
    lifted: list[tuple[str, str, str, Mapping[str, Any]]] = []
    for src, dst, data in graph.edges_of(EdgeKind.IMPORTS, EdgeKind.CALLS):
        kind = data["kind"]
        user, used = graph.node(src), graph.node(dst)
        if user["kind"] == "test" or not user.get("component") or not used.get("component"):
            continue
        if user["component"] != used["component"]:
            lifted.append(
                (f"component:{user['component']}", f"component:{used['component']}", kind, data)
            )
    lifted.sort(key=lambda e: (e[0], e[1], e[2], e[3]["path"] or "", e[3]["line"] or 0))
    for a, b, kind, data in lifted:
        edge_kind, provenance = EdgeKind(kind), Provenance(data["provenance"])
        for ev_kind, path, line, confidence, detail in data["evidence"]:
            graph.link(
                a,
                b,
                edge_kind,
                provenance,
                confidence,
                path,
                line,
                evidence=EvidenceKind(ev_kind),
                detail=detail,
            )
