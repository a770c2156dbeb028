"""SM303 dependency-declared-unobserved and SM304 dependency-observed-undeclared: each
component's upstream/downstream as its pages declare them vs what the code shows.

A page's ``upstream``/``downstream`` lists and the code's calls and imports are two kinds of
evidence on the same component pair of the map (declared: ``doc_front_matter``; observed:
``code_reference``, ``import``). Either kind, in either form (a call or an import), answers for
the pair in that direction.

- **SM303**: a page declares ``A → B`` and no call or import from A to B is in the code. When the
  code has ``B → A`` instead, the message says the direction is reversed.
- **SM304**: the code has ``A → B`` with B in the layer directly below A's, and the page of A
  declares a ``downstream`` list (or the page of B an ``upstream`` list) that does not name it;
  both must be components a page declares (an inferred one cannot be named). A stack whose
  pages say nothing of upstream and downstream gets none: the three questions (holes) ask
  those. Dependencies inside one layer are the layer's own business, and a use that goes up or
  skips a layer is SM202's or SM203's.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass

from mapper.check.facts import Facts
from mapper.check.finding import Finding, Policy, RuleInfo, Severity
from mapper.check.registry import Rule
from mapper.check.rules.docs import _fm_line
from mapper.ingest.docs import DocPage
from mapper.model import EdgeKind, Evidence, Location, NodeKind

_KINDS = frozenset({EdgeKind.CALLS, EdgeKind.IMPORTS})
Pair = tuple[str, str]


@dataclass(frozen=True, slots=True)
class _Dependencies:
    declared: dict[Pair, list[Evidence]]
    observed: dict[Pair, list[Evidence]]
    layers: dict[str, str | None]  # component node id → layer
    pages: dict[str, DocPage]  # component name → the page that declares it


def _dependencies(facts: Facts) -> _Dependencies:
    if "dependencies" in facts.cache:
        cached: _Dependencies = facts.cache["dependencies"]
        return cached
    from mapper.query import open_map

    m = open_map(facts.root, facts.config)
    declared: dict[Pair, list[Evidence]] = defaultdict(list)
    observed: dict[Pair, list[Evidence]] = defaultdict(list)
    layers: dict[str, str | None] = {}
    for node in m.nodes(NodeKind.COMPONENT):
        layers[node.id] = node.layer
        for edge in m.neighbours(node.id, kinds=_KINDS, direction="out"):
            if not edge.target.startswith("component:") or edge.target == node.id:
                continue
            for ev in edge.evidence:
                (declared if ev.declared else observed)[(edge.source, edge.target)].append(ev)
    pages = {
        page.front_matter["component"]: page
        for page in facts.docs
        if isinstance(page.front_matter.get("component"), str)
    }
    found = _Dependencies(dict(declared), dict(observed), layers, pages)
    facts.cache["dependencies"] = found
    return found


def _name(node_id: str) -> str:
    return node_id.removeprefix("component:")


def _lists(page: DocPage | None, key: str) -> list[str] | None:
    """The names a page's ``key`` list gives (None when the page has no such key)."""
    if page is None or key not in page.front_matter:
        return None
    value = page.front_matter[key]
    if isinstance(value, str):
        return [value]
    return [str(v) for v in value] if isinstance(value, list) else []


def _unobserved(facts: Facts) -> Iterator[Finding]:
    deps = _dependencies(facts)
    for (src, dst), evidence in sorted(deps.declared.items()):
        if (src, dst) in deps.observed:
            continue
        a, b = _name(src), _name(dst)
        for ev in evidence:
            if ev.path is None:
                continue
            page = next((p for p in facts.docs if p.path == ev.path), None)
            key = "downstream" if page is not None and _name_of(page) == a else "upstream"
            named = b if key == "downstream" else a
            reversed_ = (dst, src) in deps.observed
            why = (
                f"the code has {b} → {a}: the direction is reversed"
                if reversed_
                else f"no call or import from {a} to {b} is in the code"
            )
            line = _fm_line(facts, page, key, named) if page is not None else 1
            yield SM303.finding(
                f"{ev.path} declares {a} → {b} ({key}: {named}), but {why}",
                subject=f"{src}->{dst}",
                layer=deps.layers.get(src),
                map_loc=Location(ev.path, line),
                fix=f"take {named} out of the page's {key} list"
                + (", and name it on the other side" if reversed_ else "")
                + f", or make {a} use {b} as the page says",
            )


def _name_of(page: DocPage) -> str | None:
    value = page.front_matter.get("component")
    return value if isinstance(value, str) else None


def _adjacent(facts: Facts, deps: _Dependencies, src: str, dst: str) -> bool:
    """Whether ``dst``'s layer is the one directly below ``src``'s."""
    order = [layer.id for layer in facts.config.layers]
    upper, lower = deps.layers.get(src), deps.layers.get(dst)
    if upper not in order or lower not in order:
        return False
    return order.index(lower) == order.index(upper) + 1


def _undeclared(facts: Facts) -> Iterator[Finding]:
    deps = _dependencies(facts)
    for (src, dst), evidence in sorted(deps.observed.items()):
        if (src, dst) in deps.declared or not _adjacent(facts, deps, src, dst):
            continue
        a, b = _name(src), _name(dst)
        down, up = deps.pages.get(a), deps.pages.get(b)
        if down is None or up is None:  # a component no page declares cannot be named on one
            continue
        down_list, up_list = _lists(down, "downstream"), _lists(up, "upstream")
        if down_list is None and up_list is None:
            continue
        page, key = (down, "downstream") if down_list is not None else (up, "upstream")
        first = evidence[0]
        line = _fm_line(facts, page, key, key)
        sites = len({(e.path, e.line) for e in evidence})
        yield SM304.finding(
            f"{a} uses {b} in the code ({first.cite()}, {sites} site(s)), but {page.path} "
            f"does not name {b if key == 'downstream' else a} in its {key} list",
            subject=f"{src}->{dst}",
            layer=deps.layers.get(src),
            code=Location(first.path, first.line) if first.path else None,
            map_loc=Location(page.path, line),
            fix=f"add {b if key == 'downstream' else a} to {page.path}'s {key} list, or remove "
            f"the use if {a} should not depend on {b}",
        )


SM303 = Rule(
    RuleInfo(
        "SM303",
        "dependency-declared-unobserved",
        Severity.WARNING,
        Policy.MAP_STALE,  # nothing in the code to date: the page claims what is not there
        "A page declares a component upstream or downstream of another, and the code never "
        "shows that dependency.",
        "Correct the page's upstream/downstream list, or make the code use what it declares.",
    ),
    _unobserved,
)
SM304 = Rule(
    RuleInfo(
        "SM304",
        "dependency-observed-undeclared",
        Severity.WARNING,
        Policy.HISTORY,
        "The code uses a component of another layer that the pages' upstream/downstream "
        "lists leave out.",
        "Name the dependency on the page, or remove the use.",
    ),
    _undeclared,
)
RULES = (SM303, SM304)
