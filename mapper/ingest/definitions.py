"""Where a dotted Python name, as contracts and pages write it, is defined.

``a.b.C.m`` is split at the longest prefix that is a module (``a.b``); the rest is looked up
among that module's definitions, through a class's bases (an inherited member), as an
instance attribute a method of the class assigns (``self.x = ...``, the class defines it),
and, when the module does not define the first name, through the module's imports: a named
import (a package re-exporting ``from .mod import C``) or ``from x import *``, chains up to
six deep. A module names itself. Contract entries resolve to their implementation this way
at ingest, and the check asks the same question of the same resolver.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from mapper.ingest.code import ParsedFile
from mapper.ingest.resolve_python import PythonNames
from mapper.model import Symbol, SymbolKind

_MAX_DEPTH = 6

#: a file outside the resolver's files, parsed on demand (None: it cannot be parsed)
Fetch = Callable[[str], ParsedFile | None]


@dataclass(frozen=True, slots=True)
class Definition:
    """Where a name is defined: its canonical dotted name, its file, and its symbol (None for
    a module; the class for an instance attribute)."""

    name: str
    path: str
    symbol: Symbol | None


def definition(
    names: PythonNames,
    dotted: str,
    *,
    modules: Mapping[str, str] | None = None,
    fetch: Fetch | None = None,
    depth: int = 0,
) -> Definition | None:
    """The definition of ``dotted``, or None. ``modules`` (module → path) may name modules
    the resolver has not indexed; ``fetch`` parses such a file when the name leads into it."""
    split = _module(names, dotted, modules, fetch)
    if split is None:
        return None
    mod, path, rest = split
    if not rest:
        return Definition(mod, path, None)
    for cut in range(len(rest), 0, -1):
        qual = ".".join([mod, *rest[:cut]])
        sym = names.py.get(qual)
        if sym is None:
            continue
        if cut == len(rest):
            return Definition(qual, sym.location.path, sym)
        if cut != len(rest) - 1 or sym.kind is not SymbolKind.CLASS:
            return None
        if (qual, rest[cut]) in names.attributes:
            return Definition(f"{qual}.{rest[cut]}", sym.location.path, sym)
        if depth >= _MAX_DEPTH:
            return None
        for base in names.bases.get(qual, ()):
            found = definition(
                names, f"{base}.{rest[cut]}", modules=modules, fetch=fetch, depth=depth + 1
            )
            if found is not None:
                return found
        return None
    pf = names.file(path)
    if depth >= _MAX_DEPTH or pf is None:
        return None
    bound = dict(pf.imports).get(rest[0])
    if bound is not None and bound != dotted:  # a named import: that name and no other
        target = ".".join([bound, *rest[1:]])
        return definition(names, target, modules=modules, fetch=fetch, depth=depth + 1)
    for local, base in pf.imports:  # from x import *
        if local == "*" and base != mod:
            target = ".".join([base, *rest])
            found = definition(names, target, modules=modules, fetch=fetch, depth=depth + 1)
            if found is not None:
                return found
    return None


def _module(
    names: PythonNames, dotted: str, modules: Mapping[str, str] | None, fetch: Fetch | None
) -> tuple[str, str, list[str]] | None:
    """(the longest module prefix of ``dotted``, its file, the remaining names)."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        mod = ".".join(parts[:cut])
        path = names.modules.get(mod)
        if path is None and modules is not None:
            path = modules.get(mod)
            if path is not None and fetch is not None and names.file(path) is None:
                pf = fetch(path)
                if pf is not None:
                    names.add(pf)
        if path is not None:
            return mod, path, parts[cut:]
    return None
