"""Python relations beyond calls and imports: inherits, overrides, references, registers.

Runs on the graph :func:`mapper.ingest.build.build_code` is building, with its resolver:

* ``inherits``: class → each base class the resolver finds on the map (at the class's line);
* ``overrides``: method → the method of the same name in the nearest base class that has one;
* ``references``: definition (or the file, at module level) → a class or constant it names
  without calling it (``DType.F32``, ``MAX_SIZE``, an annotation), once per scope;
* ``registers``: a registering decorator (its name starts with ``register``) → the definition
  it decorates, and a registry call ``register*(NAME, …)`` → each argument it names; the
  decorator or call as written is the evidence's detail. Other decorators become ``calls``
  edges from the decorated definition to the decorator.
"""

from __future__ import annotations

from mapper.graph import MapGraph
from mapper.ingest.code import ParsedFile
from mapper.ingest.resolve import Resolver
from mapper.model import EdgeKind, EvidenceKind, Language, Provenance, Reference, SymbolKind

TC = Provenance.TREE_SITTER
_NAMED = frozenset({SymbolKind.CLASS, SymbolKind.CONSTANT, SymbolKind.IOCTL})
_CALLABLE = frozenset({SymbolKind.FUNCTION, SymbolKind.METHOD, SymbolKind.CLASS})


def add_inheritance(graph: MapGraph, resolver: Resolver, pf: ParsedFile) -> None:
    """``inherits`` and ``overrides`` edges of one Python file's classes and methods."""
    if pf.language is not Language.PYTHON:
        return
    for sym in pf.symbols:
        where = sym.location
        if sym.kind is SymbolKind.CLASS:
            for base in resolver.bases.get(sym.qualname, ()):
                graph.link(
                    sym.node_id,
                    f"symbol:{base}",
                    EdgeKind.INHERITS,
                    TC,
                    1.0,
                    where.path,
                    where.line,
                )
        elif sym.kind is SymbolKind.METHOD:
            owner, _, name = sym.qualname.rpartition(".")
            replaced = resolver.member(owner, name, skip_own=True)
            if replaced is not None and replaced.kind is SymbolKind.METHOD:
                graph.link(
                    sym.node_id,
                    replaced.node_id,
                    EdgeKind.OVERRIDES,
                    TC,
                    1.0,
                    where.path,
                    where.line,
                )


def add_relations(graph: MapGraph, resolver: Resolver, pf: ParsedFile) -> None:
    """``references``, ``registers`` and decorator ``calls`` edges of one Python file (after
    its calls and inheritance, which a reference does not repeat)."""
    if pf.language is not Language.PYTHON:
        return
    file_id = f"file:{pf.path}"
    for ref in pf.references:
        source = f"symbol:{ref.scope}" if ref.scope else file_id
        if ref.kind == "name":
            _reference(graph, resolver, pf, ref, source)
        elif ref.kind == "decorator" and ref.scope:
            _decorator(graph, resolver, pf, ref, source)
        elif ref.kind == "register":
            _registration(graph, resolver, pf, ref)


def _reference(
    graph: MapGraph, resolver: Resolver, pf: ParsedFile, ref: Reference, source: str
) -> None:
    sym = resolver.python_name(pf, ref.target)
    if sym is None or sym.kind not in _NAMED:
        return
    where = ref.location
    if sym.location.path == where.path and sym.location.line == where.line:
        return  # the definition itself
    target = sym.node_id
    if graph.edge(source, target, "calls") or graph.edge(source, target, "inherits"):
        return
    graph.link(source, target, EdgeKind.REFERENCES, TC, 1.0, where.path, where.line)


def _decorator(
    graph: MapGraph, resolver: Resolver, pf: ParsedFile, ref: Reference, source: str
) -> None:
    sym = resolver.python_name(pf, ref.target)
    if sym is None or sym.kind not in _CALLABLE:
        return
    where, detail = ref.location, f"@{ref.target}"
    if ref.target.rpartition(".")[2].startswith("register"):
        graph.link(
            sym.node_id,
            source,
            EdgeKind.REGISTERS,
            TC,
            1.0,
            where.path,
            where.line,
            evidence=EvidenceKind.REGISTRATION,
            detail=detail,
        )
    else:
        graph.link(
            source, sym.node_id, EdgeKind.CALLS, TC, 1.0, where.path, where.line, detail=detail
        )


def _registration(graph: MapGraph, resolver: Resolver, pf: ParsedFile, ref: Reference) -> None:
    callee, _, argument = ref.target.partition(" ")
    registrar = resolver.call(pf, Reference("call", callee, ref.location, ref.scope))
    entered = resolver.python_name(pf, argument)
    if registrar is None or entered is None:
        return
    where = ref.location
    graph.link(
        registrar[0].node_id,
        entered.node_id,
        EdgeKind.REGISTERS,
        TC,
        registrar[1],
        where.path,
        where.line,
        evidence=EvidenceKind.REGISTRATION,
        detail=f"{callee}({argument})",
    )
