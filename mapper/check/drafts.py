"""The uses the layer check reports as undeclared (SM201), as uses to draft contract entries
for (``stackmap init --contracts``, :mod:`mapper.ingest.draft_uses`).

Each (layer, target) SM201 would report becomes one :class:`~mapper.ingest.draft_uses.Use` of
the definition the target resolves to: the name itself, else its nearest enclosing definition
(``Cls.from_buffer_copy``, inherited from outside the repository, is a use of ``Cls``), a module
for a module imported whole. Targets resolving to one definition are one use, their sites
merged. C calls name their definition ``path:NAME``, as drafted C entries do.
"""

from __future__ import annotations

from pathlib import Path

from mapper.check.facts import Facts
from mapper.check.onmap import facts_from_map
from mapper.check.rules._deps import Dependency, undeclared_adjacent
from mapper.config import StackmapConfig
from mapper.ingest.draft_contracts import KIND_OF
from mapper.ingest.draft_uses import Use


def undeclared_uses(root: Path, config: StackmapConfig) -> list[Use]:
    """The undeclared uses of the layer directly below, from ``root``'s (refreshed) map."""
    facts = facts_from_map(root, config)
    merged: dict[tuple[str, str, str], Use] = {}
    for (layer, _target), deps in undeclared_adjacent(facts).items():
        first = min(deps, key=lambda d: (d.src_path, d.line or 0))
        symbol, kind, path, line = _defined(facts, first)
        sites = {(d.src_path, d.line) for d in deps}
        names = {first.target}
        how = first.kind
        key = (layer, first.dst_layer, symbol)
        if key in merged:
            sites |= set(merged[key].sites)
            names |= set(merged[key].names)
            how = merged[key].how
        ordered = tuple(sorted(sites, key=lambda s: (s[0], s[1] or 0)))
        merged[key] = Use(
            layer, first.dst_layer, symbol, kind, path, line, how, ordered, tuple(sorted(names))
        )
    return list(merged.values())


def _defined(facts: Facts, dep: Dependency) -> tuple[str, str, str, int | None]:
    """(symbol, interface kind, path, line) of what ``dep`` uses."""
    if not dep.src_path.endswith(".py"):
        parsed = facts.parsed(dep.dst_path)
        found = [s for s in parsed.symbols if s.qualname == dep.target] if parsed else []
        line = found[0].location.line if found else None
        return f"{dep.dst_path}:{dep.target}", "function", dep.dst_path, line
    name = dep.target
    res = facts.definition(name)
    while res is None and "." in name:
        name = name.rpartition(".")[0]
        res = facts.definition(name)
    if res is None:
        return dep.target, "module", dep.dst_path, None
    if res.symbol is None:
        return res.name, "module", res.path, None
    kind = KIND_OF.get(res.symbol.kind.value, "function")
    return res.name, kind, res.path, res.symbol.location.line
