"""SM201 undeclared-interface, SM202 layer-upward, SM203 layer-skip.

From Python imports and calls and C/C++ includes and calls (see :mod:`._deps`). A layer may
depend on the layer directly below it through interfaces its contract declares; upward
dependencies are always wrong; skipping a layer needs a contract between the two layers that
declares the interface.

With ``layering = "relaxed"`` in the config (what ``stackmap init`` writes for layers it
ranks from the code's own dependencies, where a layer using any layer below is the ranking, not
a fault) skipping is allowed and SM203 reports nothing.

Upward and skipping uses are reported once per (file, rule, target layer): the finding sits at
the first use and counts every use site of the file into that layer, listing their places, so a
file calling a layer above it a hundred times is one thing to fix, not a hundred.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

from mapper.check.facts import Facts
from mapper.check.finding import Finding, Policy, RuleInfo, Severity
from mapper.check.registry import Rule
from mapper.check.rules._common import layer_entry
from mapper.check.rules._deps import Dependency, dependency_sites, undeclared_adjacent
from mapper.model import Location


def _where(facts: Facts, dep: Dependency) -> dict[str, object]:
    return {
        "subject": dep.subject,
        "layer": dep.src_layer,
        "code": Location(dep.src_path, dep.line),
        "map_loc": layer_entry(facts, dep.src_layer),
    }


def _gap(facts: Facts, dep: Dependency) -> int:
    cfg = facts.config
    return cfg.layer_index(dep.dst_layer) - cfg.layer_index(dep.src_layer)


def _undeclared(facts: Facts) -> Iterator[Finding]:
    """One finding per undeclared symbol a layer uses, at its first use (one declaration in
    the contract fixes every use)."""
    for (layer, target), deps in undeclared_adjacent(facts).items():
        dep = min(deps, key=lambda d: (d.src_path, d.line or 0))
        contract = f"{dep.src_layer}_{dep.dst_layer}"
        between = facts.contract_between(dep.src_layer, dep.dst_layer)
        where = _where(facts, dep)
        where["subject"] = f"{layer}->{target}"
        if between:
            where["map_loc"] = Location(between[0].path)
        more = f" (and {len(deps) - 1} more file(s))" if len(deps) > 1 else ""
        yield SM201.finding(
            f"{dep.src_layer} uses {dep.target} ({dep.kind}) from {dep.dst_layer}{more}, "
            f"which no {dep.src_layer}→{dep.dst_layer} contract declares",
            fix=f"declare the interface in contracts/{contract}.yaml (with sync, "
            f"synchronization, memory, errors), or use an interface that is declared",
            **where,  # type: ignore[arg-type]
        )


#: use sites named in one aggregated finding's message; the rest are counted
_SHOWN_SITES = 5


def _per_file(facts: Facts, upward: bool) -> Iterator[list[Dependency]]:
    """The upward (or skipping, undeclared) use sites grouped by (file, target layer)."""
    groups: dict[tuple[str, str], list[Dependency]] = {}
    for dep in dependency_sites(facts):
        gap = _gap(facts, dep)
        if (gap >= 0) if upward else (gap <= 1 or dep.declared):
            continue
        groups.setdefault((dep.src_path, dep.dst_layer), []).append(dep)
    for key in sorted(groups):
        yield sorted(groups[key], key=lambda d: (d.line or 0, d.target))


def _sites(deps: list[Dependency]) -> str:
    """``""`` for one use; else how many, of which targets, and where."""
    if len(deps) == 1:
        return ""
    places = Counter((d.target, d.line) for d in deps)
    shown = ", ".join(
        f"{target} (line {line}{f' ×{n}' if n > 1 else ''})"
        for (target, line), n in list(places.items())[:_SHOWN_SITES]
    )
    more = f" and {len(places) - _SHOWN_SITES} more" if len(places) > _SHOWN_SITES else ""
    return f"; {len(deps)} use sites in this file: {shown}{more}"


def _aggregated(facts: Facts, deps: list[Dependency]) -> dict[str, object]:
    where = _where(facts, deps[0])
    where["subject"] = f"{deps[0].src_path}->{deps[0].dst_layer}"
    return where


def _upward(facts: Facts) -> Iterator[Finding]:
    for deps in _per_file(facts, upward=True):
        dep = deps[0]
        yield SM202.finding(
            f"{dep.src_layer} depends upward on {dep.dst_layer}: {dep.kind} of {dep.target} "
            f"({dep.dst_path}){_sites(deps)}",
            fix=f"invert the dependency: move what {dep.src_layer} needs into "
            f"{dep.src_layer} or below, or pass it down (callback, fence, parameter)",
            **_aggregated(facts, deps),  # type: ignore[arg-type]
        )


def _skip(facts: Facts) -> Iterator[Finding]:
    if facts.config.layering == "relaxed":  # any layer below may be used: no skip to report
        return
    for deps in _per_file(facts, upward=False):
        dep = deps[0]
        yield SM203.finding(
            f"{dep.src_layer} skips to {dep.dst_layer}: {dep.kind} of {dep.target} "
            f"({dep.dst_path}) with no {dep.src_layer}→{dep.dst_layer} contract declaring it"
            f"{_sites(deps)}",
            fix="go through the layer in between (it re-exports or wraps what is needed), "
            f"or declare the interface in a contracts/{dep.src_layer}_{dep.dst_layer}.yaml",
            **_aggregated(facts, deps),  # type: ignore[arg-type]
        )


SM201 = Rule(
    RuleInfo(
        "SM201",
        "undeclared-interface",
        Severity.WARNING,
        Policy.HISTORY,
        "A call or import into the layer below uses a symbol no contract declares.",
        "Declare the interface in the contract of that pair of layers, or use a declared one.",
    ),
    _undeclared,
)
SM202 = Rule(
    RuleInfo(
        "SM202",
        "layer-upward",
        Severity.ERROR,
        Policy.CODE_WRONG,
        "A lower layer imports, includes or calls a higher layer.",
        "Invert the dependency: pass what is needed down, or move it to the lower layer.",
    ),
    _upward,
)
SM203 = Rule(
    RuleInfo(
        "SM203",
        "layer-skip",
        Severity.ERROR,
        Policy.CODE_WRONG,
        "A layer imports, includes or calls a layer more than one below it without a "
        "contract between the two declaring that interface.",
        "Go through the layer in between, or declare the interface in a contract.",
    ),
    _skip,
)
RULES = (SM201, SM202, SM203)
