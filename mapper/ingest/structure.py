"""Layers proposed from structure: the condensed import/include/call graph of a repository.

Used by ``stackmap init`` (:mod:`mapper.ingest.propose`) for a stack whose folders are not
named after the usual layers. Every code file is parsed once (the same parser and resolver as
the ingest, built-in C macros, Python packages under ``src/`` or ``python/`` found); files are
grouped into *units* (:mod:`mapper.ingest.units`), the folders at the shallowest depth that
splits the code into at least three; a unit depends on another when one of its files imports
or includes a file of the other, calls a function defined there, or uses an ioctl or a
function-pointer slot that one of its functions provides. Imports inside a function body or
under ``if TYPE_CHECKING:`` are left out: they are how Python code says "I use this lazily, it
is not below me".

Edges are weighed (a module-level import or an include counts :data:`WEIGHTS`; a call less,
since it may go through a lazy import) and cycles are broken, not merged: inside each strongly
connected group the lightest edge (the use against the grain) is set aside until none is left,
and every edge set aside is reported with its evidence. The acyclic rest is ranked by the
longest path down to a unit that uses nothing (so what everything rests on is at the bottom),
and units of the same rank become one layer of siblings (plug-ins: one backend per device).
Each boundary keeps how many edges cross it and one example with its location, as the
evidence for it.
"""

from __future__ import annotations

import os
import re
from collections import Counter, defaultdict
from dataclasses import dataclass
from pathlib import Path

import networkx as nx

from mapper.ingest.bindings import resolve as resolve_bindings
from mapper.ingest.code import (
    CODE_LANGUAGES,
    ParsedFile,
    language_for,
    parse_source,
    python_module,
    sniff_language,
)
from mapper.ingest.resolve import Resolver
from mapper.ingest.units import split_own_files, units_of
from mapper.model import Language

MAX_FILES = 20_000
#: how much one use of each kind says "the user sits above the used"
WEIGHTS = {"import": 3, "include": 3, "ioctl": 2, "slot": 2, "call": 1}
_TYPE_CHECKING = re.compile(r"^([ \t]*)if\s+(?:typing\.)?TYPE_CHECKING\s*:", re.M)
_IMPORT_HEAD = re.compile(r"^\s*(?:from|import)\s+([A-Za-z_]\w*)", re.M)
_SKIP = {".git", ".venv", "venv", "node_modules", "build", "dist", "__pycache__", ".stackmap"}
_NOT_CODE = {"docs", "doc", "tests", "test", "examples", "benchmarks", "scripts", "third_party"}


@dataclass(frozen=True, slots=True)
class Boundary:
    """``upper`` uses ``lower``: how many edges cross, of which kinds, and one example."""

    upper: str
    lower: str
    edges: int
    kinds: tuple[str, ...]
    example: str  # "path:line (kind)"


@dataclass(frozen=True, slots=True)
class ProposedLayer:
    units: tuple[str, ...]  # folders, siblings when more than one
    files: int


@dataclass(frozen=True, slots=True)
class Structure:
    layers: tuple[ProposedLayer, ...]  # top to bottom
    boundaries: tuple[Boundary, ...]  # between units of different layers
    cycles: tuple[tuple[str, ...], ...]  # units that depended on each other (cycles broken)
    python_roots: tuple[str, ...] = ()  # folders the Python packages start below
    file_edges: tuple[tuple[str, str], ...] = ()  # (user file, used file), across files
    against: tuple[Boundary, ...] = ()  # uses set aside to break the cycles, lightest first


def code_files(root: Path) -> list[str]:
    """Repository-relative paths of the code files, sorted; tests, docs and vendored folders
    left out."""
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        rel = Path(dirpath).relative_to(root).as_posix()
        depth0 = rel == "."
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d not in _SKIP and not d.startswith(".") and not (depth0 and d.lower() in _NOT_CODE)
        )
        for name in sorted(filenames):
            path = name if depth0 else f"{rel}/{name}"
            if language_for(path) in CODE_LANGUAGES:
                found.append(path)
    return sorted(found)[:MAX_FILES]


def python_roots(root: Path, paths: list[str]) -> tuple[str, ...]:
    """Folders Python packages start below: the parent of each folder holding Python files
    whose name the repository's code imports absolutely (``user/`` for ``user/tinygrad/…``
    when the code says ``from tinygrad.runtime import …``)."""
    heads: set[str] = set()
    for path in paths:
        if path.endswith(".py"):
            try:
                text = (root / path).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            heads.update(_IMPORT_HEAD.findall(text))
    found: set[str] = set()
    for path in (p for p in paths if p.endswith(".py")):
        parts = path.split("/")
        for i in range(1, len(parts) - 1):
            if parts[i] in heads:
                found.add("/".join(parts[:i]))
                break
    return tuple(sorted(found))


def _parse(
    root: Path, paths: list[str], roots: tuple[str, ...]
) -> tuple[list[ParsedFile], dict[str, set[int]]]:
    """The parsed files, and per Python file the lines under ``if TYPE_CHECKING:``."""
    out = []
    guarded: dict[str, set[int]] = {}
    for path in paths:
        try:
            data = (root / path).read_bytes()
            text = data.decode("utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        language = sniff_language(path, data)
        if language is None:
            continue
        module = python_module(path, roots) if language is Language.PYTHON else None
        out.append(parse_source(path, data, language, module))
        if language is Language.PYTHON and "TYPE_CHECKING" in text:
            guarded[path] = type_checking_lines(text)
    return out, guarded


def type_checking_lines(text: str) -> set[int]:
    """1-based line numbers of the block under each ``if TYPE_CHECKING:``."""
    lines = text.splitlines()
    found: set[int] = set()
    for match in _TYPE_CHECKING.finditer(text):
        indent = len(match.group(1).expandtabs())
        first = text.count("\n", 0, match.start()) + 1
        for number in range(first + 1, len(lines) + 1):
            line = lines[number - 1]
            if line.strip() and len(line) - len(line.lstrip()) <= indent:
                break
            found.add(number)
    return found


def propose_structure(root: Path) -> Structure:
    """The layers the repository's own dependencies suggest (see the module docstring)."""
    files = code_files(root)
    roots = python_roots(root, files)
    parsed, guarded = _parse(root, files, roots)
    unit = split_own_files(units_of([pf.path for pf in parsed]))
    resolver = Resolver(parsed)
    edges: dict[tuple[str, str], Counter[str]] = defaultdict(Counter)
    examples: dict[tuple[str, str], str] = {}
    file_edges: set[tuple[str, str]] = set()

    def depend(src_path: str, dst_path: str | None, kind: str, where: str) -> None:
        if dst_path is None or dst_path not in unit:
            return
        if src_path != dst_path:
            file_edges.add((src_path, dst_path))
        a, b = unit[src_path], unit[dst_path]
        if a != b:
            edges[(a, b)][kind] += 1
            examples.setdefault((a, b), f"{where} ({kind})")

    for pf in parsed:
        for ref in pf.references:
            where = f"{ref.location.path}:{ref.location.line}"
            if ref.kind in ("import", "include"):
                lazy = ref.kind == "import" and (
                    ref.scope is not None or ref.location.line in guarded.get(pf.path, ())
                )
                if not lazy:
                    depend(pf.path, resolver.import_file(pf, ref), ref.kind, where)
            elif ref.kind == "call" and ref.scope is not None:
                found = resolver.call(pf, ref)
                if found is not None:
                    depend(pf.path, found[0].location.path, "call", where)
    paths = {s.node_id: s.location.path for pf in parsed for s in pf.symbols}
    for b in resolve_bindings(parsed, resolver):
        if b.kind.value in ("ioctl_route", "slot_route", "ioctl_use", "slot_call"):
            source = b.location.path
            depend(source, paths.get(b.target), b.kind.value.split("_")[0], str(b.location))
    ranked = _rank(unit, edges, examples)
    return Structure(
        ranked.layers,
        ranked.boundaries,
        ranked.cycles,
        roots,
        tuple(sorted(file_edges)),
        ranked.against,
    )


def _rank(
    unit: dict[str, str],
    edges: dict[tuple[str, str], Counter[str]],
    examples: dict[tuple[str, str], str],
) -> Structure:
    graph = nx.DiGraph()
    graph.add_nodes_from(sorted(set(unit.values())))
    weight = {
        pair: sum(WEIGHTS.get(kind, 1) * n for kind, n in kinds.items())
        for pair, kinds in edges.items()
    }
    graph.add_edges_from(sorted(weight))
    cycles = tuple(tuple(sorted(c)) for c in nx.strongly_connected_components(graph) if len(c) > 1)
    set_aside = _break_cycles(graph, weight)
    height: dict[str, int] = {}  # longest path down to a unit that uses nothing
    for node in reversed(list(nx.topological_sort(graph))):
        height[node] = max((height[n] + 1 for n in graph.successors(node)), default=0)
    top = max(height.values(), default=0)
    files = Counter(unit.values())
    by_rank: dict[int, list[str]] = defaultdict(list)
    for node, h in height.items():
        by_rank[top - h].append(node)
    layers = tuple(
        ProposedLayer(tuple(sorted(by_rank[r])), sum(files[u] for u in by_rank[r]))
        for r in sorted(by_rank)
    )
    layer_of = {u: i for i, layer in enumerate(layers) for u in layer.units}

    def boundary(a: str, b: str) -> Boundary:
        kinds = edges[(a, b)]
        return Boundary(a, b, sum(kinds.values()), tuple(sorted(kinds)), examples[(a, b)])

    boundaries = tuple(
        boundary(a, b)
        for a, b in sorted(edges)
        if layer_of[a] != layer_of[b] and (a, b) not in set_aside
    )
    against = tuple(boundary(a, b) for a, b in set_aside)
    return Structure(layers, boundaries, tuple(sorted(cycles)), against=against)


def _break_cycles(graph: nx.DiGraph, weight: dict[tuple[str, str], int]) -> list[tuple[str, str]]:
    """Remove from ``graph`` the lightest edge of each cycle group until it is acyclic (ties:
    the edge whose reverse is heaviest, then by name); the removed edges in removal order."""
    removed: list[tuple[str, str]] = []
    while True:
        groups = [c for c in nx.strongly_connected_components(graph) if len(c) > 1]
        if not groups:
            return removed
        for group in sorted(groups, key=sorted):
            inside = list(graph.subgraph(group).edges)
            u, v = min(inside, key=lambda e: (weight[e], -weight.get((e[1], e[0]), 0), e))
            graph.remove_edge(u, v)
            removed.append((u, v))
