"""Answer composition for the deterministic default: one template per intent.

A template runs tools through the question's :class:`~mapper.agent.tools.Toolbox` and writes
lines from their results only; every line that states a fact carries the ``[path:line]`` the
tool returned for it, and :class:`Draft` keeps those citations. A template that finds nothing
returns None and the caller answers "the map does not know" with the nearest things it has.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from mapper.agent.records import Citation, Entity, Intent
from mapper.agent.tools import Toolbox
from mapper.config import RoleConfig


@dataclass
class Draft:
    box: Toolbox
    role: RoleConfig | None
    lines: list[str] = field(default_factory=list)
    cited: dict[str, Citation] = field(default_factory=dict)

    def cite(self, where: str | None) -> str:
        """`` [path:line]`` for a place a tool returned (and keep it), else ``""``."""
        if not where:
            return ""
        path, _, line = where.rpartition(":")
        c = self.box.returned.get((path, int(line))) if line.isdigit() else None
        if c is None:
            return ""
        self.cited.setdefault(where, c)
        return f" [{where}]"

    def say(self, text: str) -> None:
        self.lines.append(text)

    def rank(self, layer: str | None) -> int:
        """0 for the role's layers (in its order), 100 + position otherwise."""
        layers = self.box.view.layers()
        if self.role is not None and layer in self.role.layers:
            return self.role.layers.index(layer)
        return 100 + (layers.index(layer) if layer in layers else 50)

    def ordered(self, rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
        return sorted(rows, key=lambda r: self.rank(r.get("layer")))


Template = Callable[[Draft, str, list[Entity]], bool]


def _specific(entities: list[Entity], strong: float = 0.0) -> list[Entity]:
    """Entities below layer level when there are any (within 0.2 of the best score, and at
    least ``strong``), else the layers."""
    narrow = [e for e in entities if e.kind != "layer"]
    if narrow:
        best = max(e.score for e in narrow)
        narrow = [e for e in narrow if e.score >= max(best - 0.2, strong)]
    return narrow if narrow or strong else entities


def _mentioned(question: str, entities: list[Entity]) -> list[Entity]:
    """Entities in the order the question names them."""
    low = question.lower()
    return sorted(entities, key=lambda e: (low.find(e.matched.lower()), -e.score))


def describe(d: Draft, entity: Entity) -> None:
    data = d.box.run("node", node_id=entity.id)
    node = data["node"]
    where = d.cite(data["citations"][0]) if data["citations"] else ""
    if node["kind"] == "layer":
        where = _layer_page(d, entity.id)
    text = node.get("description") or node.get("title") or node.get("doc") or node.get("text") or ""
    head = f"- {entity.id} ({node['kind']}, layer {node.get('layer') or '-'}){where}"
    d.say(f"{head}: {' '.join(str(text).split())[:240]}" if text else head)
    if node["kind"] == "interface":
        d.say(
            f"  contract: {node.get('upper')} consumes, {node.get('lower')} provides; "
            f"symbol {node.get('symbol')}; {node.get('sync') or '?'}."
        )
        for key in ("synchronization", "memory", "errors"):
            if node.get(key):
                d.say(f"  {key}: {node[key]}")
    if node["kind"] == "layer":
        order = d.box.view.layers()
        i = order.index(entity.id.split(":", 1)[1]) if entity.id[6:] in order else -1
        above = order[i - 1] if i > 0 else "none (top)"
        below = order[i + 1] if 0 <= i < len(order) - 1 else "none (bottom)"
        d.say(f"  above: {above}; below: {below}.")
    if node["kind"] == "component" and node.get("paths"):
        d.say(f"  code: {', '.join(node['paths'][:6])}")


def _layer_page(d: Draft, layer_id: str) -> str:
    """The citation of the doc page that describes a layer (its layers/ page first)."""
    rows = d.box.run(
        "neighbours", node_id=layer_id, edge_kinds=["describes"], direction="in", limit=60
    )
    own = f"/{layer_id.split(':', 1)[1]}.md"
    pages = sorted(rows["edges"], key=lambda e: (not e["source"].endswith(own), "#" in e["source"]))
    for e in pages:
        node = d.box.run("node", node_id=e["source"])
        if node["citations"]:
            return d.cite(node["citations"][0])
    return ""


def _between(d: Draft, layers: list[Entity]) -> bool:
    order = d.box.view.layers()
    upper, lower = sorted((layers[0].id[6:], layers[1].id[6:]), key=order.index)
    data = d.box.run("interfaces_between", upper=upper, lower=lower)
    if not data["interfaces"]:
        return False
    d.say(f"Interfaces between {upper} (consumer) and {lower} (provider):")
    for i in data["interfaces"]:
        d.say(f"- {i['id']} ({i.get('sync') or '?'}){d.cite(_where(d, i['id']))}")
    return True


def _hits(d: Draft, query: str, limit: int = 5, kind: str | None = None) -> list[dict[str, Any]]:
    return list(d.box.run("search", query=query, limit=limit, kind=kind)["hits"])


def _list_hits(d: Draft, hits: list[dict[str, Any]]) -> None:
    for h in d.ordered(hits):
        comp = f", component {h['component']}" if h.get("component") else ""
        d.say(
            f"- {h['id']} ({h['kind']}, layer {h.get('layer') or '-'}{comp})"
            f"{d.cite(h.get('where'))}" + (f": {h['snippet']}" if h.get("snippet") else "")
        )


def locate(d: Draft, question: str, entities: list[Entity]) -> bool:
    layers = [e for e in entities if e.kind == "layer"]
    if len(layers) >= 2 and not _specific(entities, 0.85) and _between(d, layers):
        return True
    chosen = _specific(entities)[:3]
    if chosen:
        d.say("On the map:")
        for e in sorted(chosen, key=lambda e: d.rank(e.layer)):
            describe(d, e)
        return True
    from mapper.agent.entities import coverage

    if coverage(d.box.view, question) < 0.5:
        return False
    from mapper.agent.entities import content_query

    hits = [h for h in _hits(d, content_query(question)) if h["score"] >= 0.35]
    if not hits:
        return False
    d.say("The map's closest matches:")
    _list_hits(d, hits[:4])
    return True


def _walk(d: Draft, scenario_id: str) -> bool:
    data = d.box.run("scenario_walk", node_id=scenario_id)
    head = d.cite(data["citations"][0]) if data["citations"] else ""
    d.say(f"Scenario {scenario_id.split(':', 1)[1]} — {data['title']}{head}:")
    mine = [s["order"] for s in data["steps"] if d.role and s.get("layer") in d.role.layers]
    if d.role is not None:
        d.say(f"  ({d.role.name}: steps in your layers: {', '.join(map(str, mine)) or 'none'})")
    for s in data["steps"]:
        d.say(
            f"  {s['order']}. [{s.get('layer') or '-'}] {s['target']} — {s['action']}"
            f"{d.cite(s.get('where'))}"
        )
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
        (e for e in _specific(entities, 0.85) if e.kind != "scenario"), key=lambda e: -e.score
    )
    narrow = _mentioned(question, strong[:2])
    layers = [e for e in entities if e.kind == "layer"]
    if len(narrow) >= 2:
        data = d.box.run("explain_path", source=narrow[0].id, target=narrow[1].id)
        if data["hops"]:
            d.say(f"Path from {data['source']} to {data['target']}, {len(data['hops'])} hops:")
            for h in data["hops"]:
                arrow = "->" if h["walked"] == "out" else "<-"
                d.say(
                    f"  {h['from']} -{h['kind']}{arrow} {h['to']} ({h['evidence']})"
                    f"{d.cite(h.get('where'))}"
                )
            return True
    if len(layers) >= 2 and not scen and _between(d, layers):
        return True
    picked = scen[0].id if scen else pick_scenario(d, question, [e.id[6:] for e in layers])
    return _walk(d, picked) if picked else locate(d, question, entities)


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


def _where(d: Draft, node_id: str) -> str | None:
    c = next((c for c in d.box.returned.values() if c.node == node_id), None)
    return c.where if c else None


_CATEGORIES = (
    ("implementation", "implemented by"), ("interface", "interfaces it implements"),
    ("consumer", "consumed by"), ("caller", "called by"), ("importer", "imported by"),
    ("test", "tests calling it"), ("rerun", "tests to rerun"), ("doc", "docs to update"),
    ("contract", "contract entries to update"), ("scenario_step", "scenario steps to re-walk"),
    ("definition", "defined in"),
)  # fmt: skip


def impact(d: Draft, question: str, entities: list[Entity]) -> bool:
    narrow = _specific(entities)
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
    return _walk(d, scenario)


def _with_scenario(*words: str) -> Template:
    def template(d: Draft, question: str, entities: list[Entity]) -> bool:
        narrow = sorted(
            [e for e in _specific(entities) if e.kind != "scenario"],
            key=lambda e: (-e.score, d.rank(e.layer)),
        )[:2]
        for e in narrow:
            describe(d, e)
        scenario = _scenario(d, *words)
        if scenario is not None and not any(e.score >= 0.85 for e in narrow):
            _walk(d, scenario)
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
            + ", ".join(f"{i}{d.cite(_where(d, i))}" for i in b["interfaces"][:6])
        )
    return True


def map_vs_code(d: Draft, question: str, entities: list[Entity]) -> bool:
    narrow = _specific(entities)[:1]
    if not narrow:
        data = d.box.run("findings")
        holes = [f for f in data["findings"] if f["finding"] == "hole"]
        d.say(
            f"The stored map has {len(holes)} holes and {len(data['findings']) - len(holes)} "
            "contract entries whose symbol is not one definition on the map (a module, an "
            "enum); `stackmap check` runs every map-versus-code rule."
        )
        for f in data["findings"][:10]:
            d.say(f"- {f['node']}: {f['finding']}{d.cite(_where(d, f['node']))}")
        return True
    e = narrow[0]
    describe(d, e)
    data = d.box.run("neighbours", node_id=e.id, limit=60)
    declared = [
        x for x in data["edges"] if x["evidence"] in ("contract", "doc_front_matter", "doc_mention")
    ]
    observed = [x for x in data["edges"] if x["evidence"] in ("code_reference", "import")]
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
