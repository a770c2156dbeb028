"""``stackmap scenario trace ENTRY``: the call path of a request down the layers and back.

From ENTRY (a node id, a qualname, or an op name such as ``MatMul``, which starts at the top
layer's definitions spelt after the op) the walk follows code-evidenced ``calls`` edges
breadth first and keeps the shortest path reaching the deepest layer. Completion comes back up
each layer boundary through its completion interfaces (fences, waits, signals:
:mod:`.completion`), from the deepest layer reached back to the first. Each layer below the
deepest one reached is a hole: the walk names
the last definition it reached above it and the contract interfaces that should carry the
request across, with what the map lacks to follow them (no implementation, or no call from
the reached code into the implementation). A layer the path skips but that a node of the path
calls into (under relaxed layering a Python driver calls both the kernel driver's ioctl
handler and, below it, the ioctl's definition in the UAPI header) is a branch, not a hole.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

from mapper.impact.mapview import CODE_EVIDENCE, MapView, Node, cite
from mapper.impact.targets import UnknownTargetError
from mapper.model import EdgeKind, NodeKind
from mapper.scenarios import opfamily, vocab
from mapper.scenarios.completion import CompletionStep, completion


@dataclass(frozen=True, slots=True)
class TraceStep:
    node: str
    layer: str | None
    depth: int
    cite: str  # where the call into this node is written (path:line evidence)

    def to_json(self) -> dict[str, Any]:
        return {"node": self.node, "layer": self.layer, "depth": self.depth, "at": self.cite}


@dataclass(frozen=True, slots=True)
class TraceHole:
    layer: str
    after: str | None  # the last node reached above the hole
    interfaces: tuple[str, ...]  # the contract interfaces into this layer
    reason: str

    def to_json(self) -> dict[str, Any]:
        return {
            "layer": self.layer,
            "after": self.after,
            "interfaces": list(self.interfaces),
            "reason": self.reason,
        }


@dataclass(frozen=True, slots=True)
class TraceWalk:
    entry: str
    steps: tuple[TraceStep, ...]  # down the stack
    holes: tuple[TraceHole, ...]
    back: tuple[CompletionStep, ...] = ()  # completion, from the deepest layer up
    back_holes: tuple[tuple[str, str], ...] = ()  # (upper layer, why completion stops there)
    branches: tuple[TraceStep, ...] = ()  # a skipped layer the path's code also calls into

    @property
    def layers_reached(self) -> list[str]:
        out: list[str] = []
        for step in self.steps:
            if step.layer and (not out or out[-1] != step.layer):
                out.append(step.layer)
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "entry": self.entry,
            "down": [s.to_json() for s in self.steps],
            "back": [s.to_json() for s in self.back],
            "back_holes": [{"layer": layer, "reason": why} for layer, why in self.back_holes],
            "layers_reached": self.layers_reached,
            "holes": [h.to_json() for h in self.holes],
            "branches": [s.to_json() for s in self.branches],
        }


def _starts(view: MapView, entry: str) -> tuple[list[Node], bool]:
    """The nodes a trace starts from, and whether ``entry`` named an op."""
    for candidate in (entry, f"symbol:{entry}", f"interface:{entry}"):
        node = view.node(candidate)
        if node is not None:
            return [node], False
    spelt = _op_spellings(view, entry)
    top = view.layers()
    named = [n for n in vocab.named_after(view, spelt) if n.kind is NodeKind.SYMBOL and n.layer]
    if not named:
        raise UnknownTargetError(f"no node or op {entry!r} on the map", target=entry)
    best = min(top.index(n.layer) for n in named if n.layer in top)
    return sorted((n for n in named if n.layer == top[best]), key=lambda n: n.id), True


def walk_trace(view: MapView, entry: str, depth: int = 12) -> TraceWalk:
    """The deepest call path from ``entry``; UnknownTargetError when it names nothing.

    For an op, a layer the calls do not reach is entered again at the op's own footprint
    there (its vocabulary value or a definition spelt after it), cited as such.
    """
    layers = view.layers()
    starts, is_op = _starts(view, entry)
    path = _deepest(view, starts, depth)
    resumed: list[TraceHole] = []
    if is_op:
        spelt = _op_spellings(view, entry)
        while path and path[-1][0].layer in layers:
            below = layers[layers.index(path[-1][0].layer or "") + 1 :]
            nxt = next((f for layer in below if (f := _footprint(view, spelt, layer))), None)
            if nxt is None:
                break
            more = _deepest(view, nxt, depth)
            first, _ = more[0]
            more[0] = (first, f"op footprint: {first.name} at {first.path}:{first.line}")
            last = path[-1][0]
            resumed.append(
                TraceHole(
                    first.layer or "",
                    last.id,
                    _crossing(view, _above(layers, first.layer), first.layer or ""),
                    f"no call from {last.id} ({last.layer}) reaches {first.layer}: the walk "
                    f"resumes at the op's own footprint there, {first.id} "
                    f"({first.path}:{first.line}); the hand-over in between (a data format, "
                    "a registry, a dispatch table or an RPC) has no call edge on the map",
                )
            )
            path = path + more
    steps = tuple(TraceStep(n.id, n.layer, i, cite) for i, (n, cite) in enumerate(path))
    branches = _branches(view, path, layers)
    skipped = {b.layer for b in branches}
    holes = sorted(
        [*resumed, *(h for h in _holes(view, path, layers) if h.layer not in skipped)],
        key=lambda h: layers.index(h.layer),
    )
    reached = [n.layer for n, _ in path if n.layer in layers]
    back, back_holes = (
        completion(view, min(reached, key=layers.index), max(reached, key=layers.index))
        if reached
        else ((), ())
    )
    return TraceWalk(entry, steps, tuple(holes), back, back_holes, branches)


def _above(layers: list[str], layer: str | None) -> str:
    i = layers.index(layer) if layer in layers else 0
    return layers[i - 1] if i else ""


def _crossing(view: MapView, upper: str, lower: str) -> tuple[str, ...]:
    """The contract interfaces ``upper`` consumes from ``lower``."""
    return tuple(
        sorted(
            n.id
            for n in view.nodes(NodeKind.INTERFACE)
            if n.get("upper") == upper and n.get("lower") == lower
        )
    )


def _op_spellings(view: MapView, entry: str) -> set[str]:
    known = opfamily.ops(view)
    token = opfamily.find(known, entry)
    return vocab.spellings(known[token]) if token is not None else {vocab.compact(entry)}


def _footprint(view: MapView, spelt: set[str], layer: str) -> list[Node]:
    """The op's definitions in ``layer`` (code first), else its vocabulary values there."""
    named = [n for n in vocab.named_after(view, spelt) if n.layer == layer]
    code = sorted((n for n in named if n.kind is NodeKind.SYMBOL), key=lambda n: n.id)
    if code:
        return code
    values = [
        v.node
        for vs in vocab.vocabularies(view).values()
        for v in vs
        if v.token in spelt and v.node.layer == layer
    ]
    return sorted(values, key=lambda n: n.id)


def _deepest(view: MapView, starts: list[Node], depth: int) -> list[tuple[Node, str]]:
    """The shortest code-evidenced call path from one of ``starts`` to the deepest layer."""
    rank = {layer: i for i, layer in enumerate(view.layers())}
    best: list[tuple[Node, str]] = []
    best_key = (-2, 0)
    for start in starts:
        parent: dict[str, tuple[str, str] | None] = {start.id: None}
        queue = deque([(start, 0)])
        while queue:
            node, d = queue.popleft()
            key = (rank.get(node.layer or "", -1), -d)
            if key > best_key:
                best_key = key
                chain: list[tuple[Node, str]] = []
                at: str | None = node.id
                while at is not None:
                    link = parent[at]
                    found = view.node(at)
                    if found is not None:
                        chain.append((found, link[1] if link else "-"))
                    at = link[0] if link else None
                best = chain[::-1]
            if d >= depth:
                continue
            calls = view.neighbours(node.id, {EdgeKind.CALLS}, "out", CODE_EVIDENCE)
            for edge in sorted(calls, key=lambda e: e.target):
                nxt = view.node(edge.target)
                if nxt is None or nxt.kind is not NodeKind.SYMBOL or nxt.id in parent:
                    continue
                if rank.get(nxt.layer or "", -1) < rank.get(node.layer or "", -1):
                    continue  # a request goes down (or stays): upward calls are callbacks
                parent[nxt.id] = (node.id, cite(edge.citation))
                queue.append((nxt, d + 1))
    return best


def _branches(
    view: MapView, path: list[tuple[Node, str]], layers: list[str]
) -> tuple[TraceStep, ...]:
    """For each layer the path skips between its first and deepest layer, the first call a
    node of the path makes into it (an ioctl's handler in the driver, when the path goes on
    to the ioctl's definition in the UAPI header below): that layer is reached, not a hole."""
    on_path = {n.layer for n, _ in path if n.layer in layers}
    if not on_path:
        return ()
    first, deepest = (f(layers.index(x) for x in on_path if x) for f in (min, max))
    out: dict[str, TraceStep] = {}
    for i, (node, _) in enumerate(path):
        calls = view.neighbours(node.id, {EdgeKind.CALLS}, "out", CODE_EVIDENCE)
        for edge in sorted(calls, key=lambda e: e.target):
            target = view.node(edge.target)
            layer = target.layer if target is not None else None
            if target is None or layer not in layers or layer in on_path or layer in out:
                continue
            if first < layers.index(layer) < deepest:
                out[layer] = TraceStep(target.id, layer, i + 1, cite(edge.citation))
    return tuple(sorted(out.values(), key=lambda s: layers.index(s.layer or "")))


def _holes(view: MapView, path: list[tuple[Node, str]], layers: list[str]) -> list[TraceHole]:
    """Every layer from the first reached down that the path has no step in."""
    reached = {n.layer for n, _ in path if n.layer in layers}
    if not reached:
        return []
    first = min(layers.index(x) for x in reached if x)
    deepest = max(layers.index(x) for x in reached if x)
    out = []
    for i in range(first + 1, len(layers)):
        upper, layer = layers[i - 1], layers[i]
        if layer in reached:
            continue
        above = [n.id for n, _ in path if n.layer and layers.index(n.layer) < i]
        last = above[-1] if above else None
        ifaces = _crossing(view, upper, layer)
        implemented = [x for x in ifaces if view.neighbours(x, {EdgeKind.IMPLEMENTS}, "in")]
        if i > deepest + 1:
            reason = f"not reached: the walk stopped above {layers[deepest + 1]}"
        else:
            reason = (
                f"no call edge from what the walk reached above (last: {last}) into {layer}, "
                f"and no definition of {layer} spelt after the entry; of the {len(ifaces)} "
                f"contract interface(s) {upper}→{layer}, {len(implemented)} name an "
                "implementation the map resolves, none reached by a call (the crossing may "
                "go through a data format, a dispatch table, a registry or an RPC the map "
                "records no call for)"
            )
        out.append(TraceHole(layer, last, tuple(ifaces), reason))
    return out
