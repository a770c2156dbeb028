"""Check findings placed on the map: each finding gets the ids of the nodes it is about.

A finding names its subject (an interface id, a ``page:key:component`` triple, …) and the two
places it concerns, in code and on the map. Its nodes are the interface or component its
subject names, then the innermost definition at its code location and at its map location
(:meth:`~mapper.query.map.Map.nodes_touched`; the file when no definition spans the line),
without repeats.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from mapper.check.finding import Finding
from mapper.model import Location

if TYPE_CHECKING:
    from mapper.query.map import Map

_NAMED = ("interface", "component", "scenario", "layer")


def node_ids(m: Map, finding: Finding) -> tuple[str, ...]:
    """The ids of the nodes ``finding`` is about, most specific first."""
    found: list[str] = []
    for part in finding.subject.split(":"):
        found += [f"{kind}:{part}" for kind in _NAMED if f"{kind}:{part}" in m]
    for where in (finding.code, finding.map_loc):
        found += _innermost(m, where)
    return tuple(dict.fromkeys(found))


def _innermost(m: Map, where: Location | None) -> list[str]:
    """The innermost definition at ``where``, else its file when that is on the map."""
    if where is None:
        return []
    if where.line is not None:
        touched = m.nodes_touched(where.path, [(where.line, where.line)])
        if touched:
            return [touched[0].id]
    return [f"file:{where.path}"] if f"file:{where.path}" in m else []


def placed(m: Map, findings: tuple[Finding, ...]) -> tuple[Finding, ...]:
    """``findings`` with their node ids filled in."""
    return tuple(replace(f, nodes=node_ids(m, f)) for f in findings)


def check_map(m: Map) -> tuple[Finding, ...]:
    """Every rule's findings on the repository of ``m``, with node ids (no git history)."""
    from mapper.check import run_check

    report = run_check(m.config.root, config=m.config, history=False)
    return placed(m, report.findings)
