"""Test files on the map: ``test_*`` functions (and ``Test*`` class methods) become test nodes
with ``covers`` edges to the symbols they call (decorators applied inside a test included:
``@click.group`` on a nested function) and to those symbols' components."""

from __future__ import annotations

from mapper.graph import MapGraph
from mapper.ingest.code import ParsedFile
from mapper.ingest.resolve import Resolver
from mapper.model import EdgeKind, NodeKind, Provenance, SymbolKind

TC = Provenance.TREE_SITTER
INF = Provenance.INFERRED


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
        graph.link(file_id, test_id, EdgeKind.DEFINES, TC)
        tests[sym.qualname] = test_id
    if not tests:
        return
    for ref in pf.references:
        scope = ref.scope
        if ref.kind not in ("call", "decorator") or scope is None:
            continue
        found_test = _test_of(tests, scope)
        found = resolver.call(pf, ref) if found_test else None
        if found_test is None or found is None:
            continue
        target = found[0].node_id
        node = graph.get(target)
        if node is None:
            continue
        where = ref.location
        graph.link(found_test, target, EdgeKind.COVERS, TC, found[1], where.path, where.line)
        comp = node.get("component")
        if comp:
            graph.link(found_test, f"component:{comp}", EdgeKind.COVERS, INF, found[1])


def _test_of(tests: dict[str, str], scope: str) -> str | None:
    """The test whose qualname is ``scope`` or encloses it (at most one can: a test inside a
    test is not a test)."""
    name = scope
    while name:
        test = tests.get(name)
        if test is not None:
            return test
        name = name.rpartition(".")[0]
    return None
