"""Name resolution over the parsed repository: dotted Python names, C names, proto names.

Python names resolve through the module files (``a.b.C.m`` → file of ``a.b`` → symbol
``a.b.C.m``), following re-exports (a name a package ``__init__`` imports) up to a small depth,
and accepting instance attributes a class assigns (``self.x = ...``) or annotates, as ingest
recorded them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from mapper.check.facts import Facts, module_path
from mapper.check.pyfacts import class_bases
from mapper.model import Symbol, SymbolKind

_MAX_DEPTH = 6
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(frozen=True, slots=True)
class Resolved:
    """Where a name is defined: its canonical qualname, its file, and its symbol (None for a
    module, or for an instance attribute of ``symbol``'s class)."""

    name: str
    path: str
    symbol: Symbol | None
    line: int | None = None
    end_line: int | None = None


def is_python_name(facts: Facts, name: str) -> bool:
    """A dotted name whose first part is a top-level module or package of the repository."""
    parts = name.split(".")
    return (
        len(parts) > 1
        and all(_IDENT.match(p) for p in parts)
        and any(m == parts[0] or m.startswith(parts[0] + ".") for m in facts.modules)
    )


def resolve_python(facts: Facts, dotted: str, depth: int = 0) -> Resolved | None:
    split = module_path(facts.modules, dotted)
    if split is None:
        return None
    mod, path, rest = split
    if not rest:
        return Resolved(mod, path, None, 1, None)
    parsed = facts.parsed(path)
    if parsed is None:
        return None
    by_name = {s.qualname: s for s in parsed.symbols}
    for cut in range(len(rest), 0, -1):
        qual = ".".join([mod, *rest[:cut]])
        sym = by_name.get(qual)
        if sym is None:
            continue
        if cut == len(rest):
            return Resolved(qual, path, sym, sym.location.line, sym.end_line)
        if cut != len(rest) - 1 or sym.kind is not SymbolKind.CLASS:
            return None
        if _has_attribute(facts, path, sym, rest[cut]):
            return Resolved(f"{qual}.{rest[cut]}", path, sym, sym.location.line, sym.end_line)
        return _inherited(facts, path, sym, rest[cut], depth)
    if depth >= _MAX_DEPTH:
        return None
    imports = dict(parsed.imports)
    bound = imports.get(rest[0])
    if bound is not None and bound != dotted:
        return resolve_python(facts, ".".join([bound, *rest[1:]]), depth + 1)
    for local, base in parsed.imports:  # from x import *
        if local == "*" and base != mod:
            found = resolve_python(facts, ".".join([base, *rest]), depth + 1)
            if found is not None:
                return found
    return None


def _inherited(facts: Facts, path: str, cls: Symbol, member: str, depth: int) -> Resolved | None:
    """A member a class inherits from a base class defined in the repository."""
    if depth >= _MAX_DEPTH:
        return None
    parsed = facts.parsed(path)
    module = parsed.module if parsed and parsed.module else ""
    imports = dict(parsed.imports) if parsed else {}
    for base in class_bases(parsed, cls.qualname) if parsed else ():
        head, _, tail = base.partition(".")
        if head in imports:
            full = ".".join(p for p in (imports[head], tail) if p)
        else:
            full = f"{module}.{base}"
        found = resolve_python(facts, f"{full}.{member}", depth + 1)
        if found is not None:
            return found
    return None


def _has_attribute(facts: Facts, path: str, cls: Symbol, attr: str) -> bool:
    """Whether a method of ``cls`` assigns ``self.attr`` (from the stored parse; a class-level
    ``attr: T`` is a symbol of its own)."""
    parsed = facts.parsed(path)
    found = parsed.attributes if parsed is not None else ()
    return any(owner == cls.qualname and name == attr for owner, name, _ in found)


def header_end(facts: Facts, path: str, line: int | None) -> int | None:
    """Last line of a ``def`` header starting at ``line`` (parentheses balanced, ends in ':')."""
    if line is None:
        return None
    try:
        lines = (facts.root / path).read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return line
    depth = 0
    for i in range(line - 1, min(len(lines), line + 60)):
        text = lines[i].split("#", 1)[0]
        depth += text.count("(") + text.count("[") - text.count(")") - text.count("]")
        if depth <= 0 and text.rstrip().endswith(":"):
            return i + 1
    return line
