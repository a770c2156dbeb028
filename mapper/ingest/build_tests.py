"""Test files on the map: ``test_*`` functions (and ``Test*`` class methods) become test nodes
with ``covers`` edges to the symbols they call and to those symbols' components."""

from __future__ import annotations

from mapper.graph import MapGraph
from mapper.ingest.code import ParsedFile
from mapper.ingest.resolve import Resolver
from mapper.model import EdgeAttrs, EdgeKind, NodeKind, Provenance, SymbolKind

TC = Provenance.TREE_SITTER


def add_tests(graph: MapGraph, resolver: Resolver, pf: ParsedFile) -> None:
    file_id = f"file:{pf.path}"
    graph.add_node(
        file_id,
        NodeKind.FILE,
        pf.path,
        path=pf.path,
        line=1,
        language=pf.language.value,
        loc=pf.loc,
        test=True,
        module=pf.module,
    )
    if pf.language.value != "python":
        return
    prefix = (pf.module + ".") if pf.module else ""
    tests: dict[str, str] = {}
    for sym in pf.symbols:
        name = sym.qualname[len(prefix) :] if sym.qualname.startswith(prefix) else sym.qualname
        parts = name.split(".")
        is_test = parts[-1].startswith("test") and sym.kind in (
            SymbolKind.FUNCTION,
            SymbolKind.METHOD,
        )
        if not is_test or (len(parts) == 2 and not parts[0].startswith("Test")) or len(parts) > 2:
            continue
        test_id = f"test:{pf.path}::{'::'.join(parts)}"
        graph.add_node(
            test_id,
            NodeKind.TEST,
            name,
            path=pf.path,
            line=sym.location.line,
            qualname=sym.qualname,
        )
        graph.add_edge(file_id, test_id, EdgeAttrs(EdgeKind.DEFINES, TC))
        tests[sym.qualname] = test_id
    for ref in pf.references:
        if ref.kind != "call" or ref.scope is None:
            continue
        found_test = next(
            (t for q, t in tests.items() if ref.scope == q or ref.scope.startswith(q + ".")), None
        )
        found = resolver.call(pf, ref) if found_test else None
        if found_test is None or found is None or found[0].node_id not in graph:
            continue
        target = found[0].node_id
        graph.add_edge(found_test, target, EdgeAttrs(EdgeKind.COVERS, TC, found[1], ref.location))
        comp = graph.node(target).get("component")
        if comp:
            graph.add_edge(
                found_test,
                f"component:{comp}",
                EdgeAttrs(EdgeKind.COVERS, Provenance.INFERRED, found[1]),
            )
