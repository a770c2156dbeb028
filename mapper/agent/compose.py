"""Answer composition for the deterministic default: one template per intent.

A template runs tools through the question's :class:`~mapper.agent.tools.Toolbox` and writes
lines from their results only; every line that states a fact carries the ``[path:line]`` the
tool returned for it, and :class:`Draft` keeps those citations. A template that finds nothing
returns False and the caller answers "the map does not know" with the nearest things it has.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from mapper.agent.draft import (
    Draft,
    between,
    describe,
    list_hits,
    mentioned,
    search_hits,
    specific,
    walk,
    where_of,
)
from mapper.agent.records import Entity, Intent

Template = Callable[[Draft, str, list[Entity]], bool]


def locate(d: Draft, question: str, entities: list[Entity]) -> bool:
    layers = [e for e in entities if e.kind == "layer"]
    if len(layers) >= 2 and not specific(entities, 0.85) and between(d, layers):
        return True
    chosen = specific(entities)[:3]
    if chosen:
        d.say("On the map:")
        for e in sorted(chosen, key=lambda e: d.rank(e.layer)):
            describe(d, e)
        return True
    from mapper.agent.entities import coverage

    if coverage(d.box.view, question) < 0.5:
        return False
    from mapper.agent.entities import content_query

    found = [h for h in search_hits(d, content_query(question)) if h["score"] >= 0.35]
    if not found:
        return False
    d.say("The map's closest matches:")
    list_hits(d, found[:4])
    return True


def _scenario(d: Draft, *words: str) -> str | None:
    from mapper.model import NodeKind

    for node in d.box.view.nodes(NodeKind.SCENARIO):
        if any(w in node.id for w in words):
            return node.id
    return None


def explain_path(d: Draft, question: str, entities: list[Entity]) -> bool:
    scen = [e for e in entities if e.kind == "scenario"]
    strong = sorted(
        (e for e in specific(entities, 0.85) if e.kind != "scenario"), key=lambda e: -e.score
    )
    narrow = mentioned(question, strong[:2])
    layers = [e for e in entities if e.kind == "layer"]
    if len(narrow) >= 2:
        data = d.box.run("explain_path", source=narrow[0].id, target=narrow[1].id)
        if data["hops"]:
            d.say(f"Path from {data['source']} to {data['target']}, {len(data['hops'])} hops:")
            for h in data["hops"]:
                arrow = "->" if h["walked"] == "forward" else "<-"
                d.say(
                    f"  {h['from']} -{h['kind']}{arrow} {h['to']} ({h['evidence']})"
                    f"{d.cite(h.get('where'))}"
                )
            return True
    if len(layers) >= 2 and not scen and between(d, layers):
        return True
    picked = scen[0].id if scen else pick_scenario(d, question, [e.id[6:] for e in layers])
    if picked is None:
        return locate(d, question, entities)
    if not scen:
        d.say("No direct path on the map; the closest walk it holds:")
    return walk(d, picked)


def pick_scenario(d: Draft, question: str, layers: list[str]) -> str | None:
    """The scenario sharing most words with the question (walks first), among those whose
    steps reach every named layer; None when none shares a word or reaches them."""
    from mapper.agent.entities import words_of
    from mapper.model import NodeKind

    asked = words_of(question)
    best: tuple[int, bool, str] | None = None
    for node in d.box.view.nodes(NodeKind.SCENARIO):
        steps = node.attrs.get("steps") or []
        reached = {(d.box.view.node(str(s.get("target"))) or node).layer for s in steps}
        if not set(layers) <= reached:
            continue
        text = " ".join([node.id, node.name, *(str(s.get("action", "")) for s in steps)])
        overlap = len(asked & words_of(text)) + (2 if layers else 0)
        key = (overlap, "walk" in node.id, node.id)
        if overlap and (best is None or key > best):
            best = key
    return best[2] if best else None


_CATEGORIES = (
    ("implementation", "implemented by"), ("interface", "interfaces it implements"),
    ("consumer", "consumed by"), ("caller", "called by"), ("importer", "imported by"),
    ("test", "tests calling it"), ("rerun", "tests to rerun"), ("doc", "docs to update"),
    ("contract", "contract entries to update"), ("scenario_step", "scenario steps to re-walk"),
    ("definition", "defined in"),
)  # fmt: skip


def impact(d: Draft, question: str, entities: list[Entity]) -> bool:
    narrow = specific(entities)
    if not narrow:
        return False
    target = narrow[0]
    data = d.box.run("impact", node_id=target.id)
    describe(d, target)
    d.say(f"Changing {target.id} reaches layers: {', '.join(data['layers']) or 'none'}.")
    if not data["affected"] and target.kind in ("component", "layer"):
        return _dependants(d, target)
    for category, label in _CATEGORIES:
        rows = d.ordered(data["affected"].get(category, []))
        if rows:
            d.say(f"{label} ({len(rows)}):")
            for r in rows[:8]:
                comp = f", {r['component']}" if r.get("component") else ""
                d.say(f"  - {r['id']} [{r.get('layer') or '-'}{comp}]{d.cite(r.get('evidence'))}")
    return True


def _dependants(d: Draft, target: Entity) -> bool:
    """A component's dependants: the nodes calling, importing or consuming into it."""
    data = d.box.run(
        "neighbours",
        node_id=target.id,
        edge_kinds=["calls", "imports", "consumes"],
        direction="in",
        limit=60,
    )
    sources: dict[str, str | None] = {}
    for e in data["edges"]:
        sources.setdefault(e["source"], e.get("where"))
    d.say(f"Depend on {target.id} ({len(sources)}), by calls, imports or consumed interfaces:")
    for source, where in sources.items():
        d.say(f"  - {source}{d.cite(where)}")
    return True


def new_op(d: Draft, question: str, entities: list[Entity]) -> bool:
    scenario = _scenario(d, "new-op")
    if scenario is None:
        return False
    d.say("Adding an op changes one place per layer, following the map's onboarding walk:")
    named = scenario.split("new-op-", 1)[-1]
    if named and not re.search(rf"\b{re.escape(named)}\b", question.lower()):
        d.say(f"(The map's walk is written for {named}; it names the places any new op crosses.)")
    return walk(d, scenario)


def _with_scenario(*words: str) -> Template:
    def template(d: Draft, question: str, entities: list[Entity]) -> bool:
        narrow = sorted(
            [e for e in specific(entities) if e.kind != "scenario"],
            key=lambda e: (-e.score, d.rank(e.layer)),
        )[:2]
        for e in narrow:
            describe(d, e)
        scenario = _scenario(d, *words)
        if scenario is not None and not any(e.score >= 0.85 for e in narrow):
            walk(d, scenario)
        return bool(narrow) or scenario is not None

    return template


def role(d: Draft, question: str, entities: list[Entity]) -> bool:
    role_id = (
        d.role.id
        if d.role
        else next(
            (r.id for r in d.box.view.config.roles if f"{r.id} engineer" in question.lower()), None
        )
    )
    if role_id is None:
        return False
    data = d.box.run("role_view", role=role_id)
    d.say(
        f"{data['name']} — layers {', '.join(x['layer'] for x in data['layers'])}; "
        f"interests: {', '.join(data['interests'])}."
    )
    for layer in data["layers"]:
        d.say(f"- {layer['layer']}: {', '.join(c.split(':', 1)[1] for c in layer['components'])}")
    for b in data["boundaries"]:
        d.say(
            f"- {b['upper']} → {b['lower']} interfaces: "
            + ", ".join(f"{i}{d.cite(where_of(d, i))}" for i in b["interfaces"][:6])
        )
    return True


def map_vs_code(d: Draft, question: str, entities: list[Entity]) -> bool:
    narrow = specific(entities)[:1]
    if not narrow:
        data = d.box.run("findings")
        holes = [f for f in data["findings"] if f["finding"] == "hole"]
        d.say(
            f"The stored map has {len(holes)} holes and {len(data['findings']) - len(holes)} "
            "contract entries whose symbol is not one definition on the map (a module, an "
            "enum); `stackmap check` runs every map-versus-code rule."
        )
        for f in data["findings"][:10]:
            d.say(f"- {f['node']}: {f['finding']}{d.cite(where_of(d, f['node']))}")
        return True
    e = narrow[0]
    describe(d, e)
    data = d.box.run("neighbours", node_id=e.id, limit=60)
    declared = [x for x in data["edges"] if x["declared"]]
    observed = [x for x in data["edges"] if x["observed"]]
    d.say(
        f"The map says (docs, contracts): {len(declared)} edges; the code shows: "
        f"{len(observed)} edges."
    )
    for label, rows in (("declared", declared), ("observed in code", observed)):
        for x in rows[:8]:
            d.say(f"  {label}: {x['source']} {x['kind']} {x['target']}{d.cite(x.get('where'))}")
    flagged = d.box.run("findings", node_id=e.id)["findings"]
    d.say(f"Findings on {e.id}: {len(flagged)}" + ("." if not flagged else ":"))
    for f in flagged:
        d.say(f"  - {f['finding']}: {f['detail']}")
    return True


TEMPLATES: dict[Intent, Template] = {
    Intent.LOCATE: locate,
    Intent.EXPLAIN_PATH: explain_path,
    Intent.IMPACT: impact,
    Intent.NEW_OP: new_op,
    Intent.ERRORS: _with_scenario("error", "recovery", "fault"),
    Intent.PERFORMANCE: _with_scenario("performance", "bottleneck"),
    Intent.ROLE: role,
    Intent.MAP_VS_CODE: map_vs_code,
}
