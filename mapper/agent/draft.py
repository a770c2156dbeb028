"""The draft of an answer and the descriptions every template shares.

A :class:`Draft` collects the lines of an answer and the citations they carry: a line may cite
only a place a tool returned on the question's toolbox (:meth:`Draft.cite`). The helpers here
describe a node, a layer boundary or a scenario walk from tool results.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from mapper.agent.records import Citation, Entity
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


def specific(entities: list[Entity], strong: float = 0.0) -> list[Entity]:
    """Entities below layer level when there are any (within 0.2 of the best score, and at
    least ``strong``), else the layers."""
    narrow = [e for e in entities if e.kind != "layer"]
    if narrow:
        best = max(e.score for e in narrow)
        narrow = [e for e in narrow if e.score >= max(best - 0.2, strong)]
    return narrow if narrow or strong else entities


def mentioned(question: str, entities: list[Entity]) -> list[Entity]:
    """Entities in the order the question names them."""
    low = question.lower()
    return sorted(entities, key=lambda e: (low.find(e.matched.lower()), -e.score))


def describe(d: Draft, entity: Entity) -> None:
    data = d.box.run("node", node_id=entity.id)
    node = data["node"]
    where = d.cite(data["citations"][0]) if data["citations"] else ""
    if node["kind"] == "layer":
        where = layer_page(d, entity.id)
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
    if node["kind"] == "symbol":
        implements(d, entity.id)


def implements(d: Draft, node_id: str) -> None:
    """What a symbol implements (an interface, an ioctl) and what implements it (a handler)."""
    data = d.box.run("neighbours", node_id=node_id, edge_kinds=["implements"], limit=12)
    for e in data["edges"]:
        if e["source"] == node_id:
            d.say(f"  implements {e['target']}{d.cite(e.get('where'))}")
        else:
            d.say(f"  implemented by {e['source']}{d.cite(e.get('where'))}")


def layer_page(d: Draft, layer_id: str) -> str:
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


def between(d: Draft, layers: list[Entity]) -> bool:
    order = d.box.view.layers()
    upper, lower = sorted((layers[0].id[6:], layers[1].id[6:]), key=order.index)
    data = d.box.run("interfaces_between", upper=upper, lower=lower)
    if not data["interfaces"]:
        return observed_between(d, upper, lower)
    d.say(f"Interfaces between {upper} (consumer) and {lower} (provider):")
    for i in data["interfaces"]:
        d.say(f"- {i['id']} ({i.get('sync') or '?'}){d.cite(where_of(d, i['id']))}")
    return True


def observed_between(d: Draft, upper: str, lower: str) -> bool:
    """No contract between the layers: what the code of ``upper`` calls, imports or consumes
    in ``lower``, component by component."""
    from mapper.model import NodeKind

    kinds = ["calls", "imports", "consumes"]
    found: list[str] = []
    for comp in d.box.view.nodes(NodeKind.COMPONENT, upper):
        data = d.box.run("neighbours", node_id=comp.id, edge_kinds=kinds, direction="out")
        for e in data["edges"]:
            target = d.box.view.node(e["target"])
            if target is not None and target.layer == lower:
                found.append(f"- {e['source']} {e['kind']} {e['target']}{d.cite(e.get('where'))}")
    if not found:
        return False
    d.say(f"No contract names interfaces between {upper} and {lower}; the code shows:")
    for line in dict.fromkeys(found):
        d.say(line)
    return True


def search_hits(
    d: Draft, query: str, limit: int = 5, kind: str | None = None
) -> list[dict[str, Any]]:
    return list(d.box.run("search", query=query, limit=limit, kind=kind)["hits"])


def list_hits(d: Draft, hits: list[dict[str, Any]]) -> None:
    for h in d.ordered(hits):
        comp = f", component {h['component']}" if h.get("component") else ""
        d.say(
            f"- {h['id']} ({h['kind']}, layer {h.get('layer') or '-'}{comp})"
            f"{d.cite(h.get('where'))}" + (f": {h['snippet']}" if h.get("snippet") else "")
        )


def where_of(d: Draft, node_id: str) -> str | None:
    c = next((c for c in d.box.returned.values() if c.node == node_id), None)
    return c.where if c else None


def walk(d: Draft, scenario_id: str) -> bool:
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
