"""``stackmap scenario check``: the scenario pages against what the code supports.

Each step of a scenario page names a component or an interface. A step is a finding when
the code no longer supports it:

- ``missing``: the map holds no such component or interface any more;
- ``unresolved``: the interface names a symbol the code no longer defines;
- ``no-code``: the component holds no file of code;
- for a new-op page (``scenario: new-op-<op>``), checked against the derived new-op walk of
  that op: ``no-footprint`` — a component step in a layer where the walk finds nothing of
  the op;
  ``unwalked-layer`` — a layer where the walk finds the op's footprint but no step goes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mapper.errors import UnknownNameError
from mapper.impact.mapview import MapView, Node
from mapper.model import EdgeKind, NodeKind
from mapper.scenarios import vocab
from mapper.scenarios.newop import walk_new_op


@dataclass(frozen=True, slots=True)
class PageFinding:
    scenario: str
    rule: str
    path: str | None
    line: int | None
    target: str | None
    message: str

    def to_json(self) -> dict[str, Any]:
        return {
            "scenario": self.scenario,
            "rule": self.rule,
            "at": f"{self.path}:{self.line}",
            "target": self.target,
            "message": self.message,
        }


def check_pages(view: MapView) -> list[PageFinding]:
    """Findings over every scenario page on the map, in page and step order."""
    out: list[PageFinding] = []
    for scenario in sorted(view.nodes(NodeKind.SCENARIO), key=lambda n: n.id):
        steps = scenario.get("steps") or []
        for step in steps:
            out.extend(_step(view, scenario, step))
        if scenario.id.startswith("scenario:new-op-"):
            out.extend(_new_op(view, scenario, steps))
    return out


def _step(view: MapView, scenario: Node, step: dict[str, Any]) -> list[PageFinding]:
    target, line = step.get("target"), step.get("line")
    where = (scenario.path, line)
    node = view.node(target) if target else None
    if node is None:
        msg = f"step {step.get('order')} names {target}, which the map no longer holds"
        return [PageFinding(scenario.id, "missing", *where, target, msg)]
    if node.kind is NodeKind.INTERFACE and node.get("resolved") is False:
        msg = f"step {step.get('order')}: {target} names {node.get('symbol')}, undefined in code"
        return [PageFinding(scenario.id, "unresolved", *where, target, msg)]
    if node.kind is NodeKind.COMPONENT:
        files = [
            e
            for e in view.neighbours(node.id, {EdgeKind.CONTAINS}, "out")
            if e.target.startswith("file:")
        ]
        if not files:
            msg = f"step {step.get('order')}: component {target} holds no code"
            return [PageFinding(scenario.id, "no-code", *where, target, msg)]
    return []


def _new_op(view: MapView, scenario: Node, steps: list[dict[str, Any]]) -> list[PageFinding]:
    op = scenario.id.removeprefix("scenario:new-op-")
    try:
        walk = walk_new_op(view, op, like=op)
    except UnknownNameError:
        msg = f"the page is about op {op!r}, which no vocabulary on the map names"
        return [PageFinding(scenario.id, "no-footprint", scenario.path, 1, None, msg)]
    with_points = {plan.layer for plan in walk.layers if plan.points}
    stepped: dict[str, list[dict[str, Any]]] = {}  # layer → its component steps
    covered: set[str] = set()  # layers a step goes through (an interface: its lower side)
    for step in steps:
        node = view.node(step.get("target") or "")
        if node is None:
            continue
        if node.kind is NodeKind.INTERFACE:
            covered.add(str(node.get("lower")))
            continue  # an interface carries the vocabulary whatever the op
        if node.layer:
            covered.add(node.layer)
            stepped.setdefault(node.layer, []).append(step)
    out = []
    for layer, layer_steps in stepped.items():
        if layer not in with_points:
            first = layer_steps[0]
            msg = (
                f"step {first.get('order')} goes through {layer}, where the code holds nothing "
                f"of {op} (no definition spelt after it, no vocabulary value)"
            )
            out.append(
                PageFinding(
                    scenario.id,
                    "no-footprint",
                    scenario.path,
                    first.get("line"),
                    first.get("target"),
                    msg,
                )
            )
    for plan in walk.layers:
        if plan.points and plan.layer not in covered:
            names = ", ".join(vocab.short_name_of(p.like) for p in plan.points[:3])
            msg = f"the code holds {op} in {plan.layer} ({names}) but no step goes there"
            out.append(PageFinding(scenario.id, "unwalked-layer", scenario.path, 1, None, msg))
    return out
