"""How completion comes back up the layers: the fences, waits and signals a trace returns by.

A request goes down by calls; its completion comes back through the completion interfaces of
each layer boundary — the contract interfaces whose names speak of completion (a fence, a
wait, a signal, a sync, ``done``; :data:`WORDS`). For each boundary from the deepest layer a
trace reached up to its first, every completion interface is read off the map: its
implementation below and the code above that calls it (cited where the call is written). When
nothing above calls the implementation, a method of the same name in the lower layer that
code above does call is given instead, labelled as matched by name only (a protocol or base
class the map links no implementation to); when neither exists the boundary is a hole, naming
the interfaces and what the map lacks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mapper.impact.mapview import CODE_EVIDENCE, MapView, Node, cite
from mapper.model import EdgeKind, NodeKind
from mapper.scenarios import vocab

#: Words naming completion in accelerator stacks' interfaces.
WORDS = frozenset({"fence", "wait", "signal", "sync", "synchronize", "done", "complete", "event"})


@dataclass(frozen=True, slots=True)
class CompletionStep:
    interface: str  # the contract interface completion crosses
    lower: str  # its implementation (the layer below reports completion here)
    upper: str | None  # the code above that waits on or polls it
    layer: str  # the upper layer
    at: str  # where the upper code calls it (path:line), or where the interface is stated
    how: str  # "call", or "name" when matched by name only

    def to_json(self) -> dict[str, Any]:
        return {
            "interface": self.interface,
            "from": self.lower,
            "to": self.upper,
            "layer": self.layer,
            "at": self.at,
            "how": self.how,
        }


def _interfaces(view: MapView, upper: str, lower: str) -> list[Node]:
    return sorted(
        (
            n
            for n in view.nodes(NodeKind.INTERFACE)
            if n.get("upper") == upper
            and n.get("lower") == lower
            and vocab.runs(vocab.short_name(n)) & WORDS
        ),
        key=lambda n: n.id,
    )


def _callers(view: MapView, node_id: str, layer: str) -> list[tuple[Node, str]]:
    out = []
    for edge in view.neighbours(node_id, {EdgeKind.CALLS}, "in", CODE_EVIDENCE):
        caller = view.node(edge.source)
        if caller is not None and caller.kind is NodeKind.SYMBOL and caller.layer == layer:
            out.append((caller, cite(edge.citation)))
    return sorted(out, key=lambda x: x[0].id)


def _by_name(view: MapView, impl: Node, upper: str) -> list[tuple[Node, str]]:
    """Callers in ``upper`` of a method named like ``impl`` in ``impl``'s layer."""
    short = vocab.short_name(impl)
    out = []
    for node in view.nodes(NodeKind.SYMBOL, impl.layer):
        if node.id != impl.id and vocab.short_name(node) == short:
            out += _callers(view, node.id, upper)
    return out


def completion(
    view: MapView, first: str, deepest: str
) -> tuple[tuple[CompletionStep, ...], tuple[tuple[str, str], ...]]:
    """Completion steps from ``deepest`` back up to ``first``, and the boundaries (upper
    layer, reason) it cannot cross."""
    layers = view.layers()
    steps: list[CompletionStep] = []
    holes: list[tuple[str, str]] = []
    for i in range(layers.index(deepest), layers.index(first), -1):
        upper, lower = layers[i - 1], layers[i]
        ifaces = _interfaces(view, upper, lower)
        found: list[CompletionStep] = []
        for iface in ifaces:
            for edge in view.neighbours(iface.id, {EdgeKind.IMPLEMENTS}, "in"):
                impl = view.node(edge.source)
                if impl is None:
                    continue
                direct = _callers(view, impl.id, upper)
                how = "call" if direct else "name"
                for caller, at in direct or _by_name(view, impl, upper):
                    found.append(CompletionStep(iface.id, impl.id, caller.id, upper, at, how))
        steps += found
        if not found:
            names = ", ".join(n.id for n in ifaces) or "no completion interface"
            holes.append(
                (
                    upper,
                    f"completion does not come back from {lower} to {upper} on the map: "
                    f"{names}; no {upper} code calls an implementation of one (nor a "
                    f"{lower} method of the same name)",
                )
            )
    return tuple(steps), tuple(holes)
