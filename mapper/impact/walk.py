"""The impact walk: from changed nodes, breadth first against the dependency edges.

What depends on a symbol: its callers (``calls`` in), the tests that call it (``covers`` in),
the interfaces it implements and, through those, the contract entry, the pages and scenario
steps naming the interface and the components consuming it; the docs naming the symbol. A
constructor's signature is its class's: the class's interfaces and pages count too, and
constructing a subclass that defines no ``__init__`` calls it. A test calling a changed symbol
is a call site (a test to edit) even when it also covers the changed file's component.
``--precise`` follows code evidence (and explicit declarations: contracts, front matter, and
doc sections naming a changed node in a code span) and stops at direct callers; ``--conservative``
also follows imports, every doc mention, similarity and declared component dependencies, up to
three callers deep. Calls on receivers of unknown type reach a changed method by its name
(:mod:`mapper.impact.loose`), labelled as such in their hop.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass

from mapper.impact.loose import loose_index
from mapper.impact.mapview import CODE_EVIDENCE, Edge, EvidenceKind, MapView, Node
from mapper.impact.records import Affected, Category, Hop, Mode, hop_of
from mapper.ingest.build_docs import SAMPLE
from mapper.model import EdgeKind, NodeKind
from mapper.query import Direction

PRECISE_EVIDENCE = CODE_EVIDENCE | {EvidenceKind.DOC_FRONT_MATTER}
ALL_EVIDENCE = frozenset(EvidenceKind)
_MENTION = frozenset({EvidenceKind.DOC_MENTION})
_E = EdgeKind


@dataclass(frozen=True, slots=True)
class WalkOptions:
    mode: Mode = Mode.PRECISE
    depth: int | None = None  # caller levels; None: 1 precise, 3 conservative

    @property
    def evidence(self) -> frozenset[EvidenceKind]:
        return PRECISE_EVIDENCE if self.mode is Mode.PRECISE else ALL_EVIDENCE

    @property
    def max_depth(self) -> int:
        if self.depth is not None:
            return max(1, self.depth)
        return 1 if self.mode is Mode.PRECISE else 3


class _Walk:
    def __init__(self, view: MapView, options: WalkOptions) -> None:
        self.view = view
        self.opts = options
        self.allowed = options.evidence
        self.found: dict[str, Affected] = {}
        self.queue: deque[tuple[Node, tuple[Hop, ...], int, bool]] = deque()

    def edges(self, node_id: str, kind: EdgeKind, direction: Direction) -> list[Edge]:
        found = self.view.neighbours(node_id, {kind}, direction, self.allowed)
        return sorted(found, key=lambda e: (e.source, e.target))

    def add(
        self,
        node: Node,
        category: Category,
        why: tuple[Hop, ...],
        *,
        key: str = "",
        path: str | None = None,
        line: int | None = None,
    ) -> Affected | None:
        """Record an item unless a path as good or better already reached it."""
        certainty = 1.0
        for hop in why:
            certainty *= hop.confidence
        item = Affected(
            key or node.id,
            node.kind.value,
            node.name,
            path if path is not None else node.path,
            line if line is not None else node.line,
            node.layer,
            node.get("component"),
            category,
            why,
            certainty,
        )
        old = self.found.get(item.node)
        if old is not None and _keeps(old, item):
            return None
        self.found[item.node] = item
        return item

    def step(
        self, edge: Edge, forward: bool, why: tuple[Hop, ...]
    ) -> tuple[Node | None, tuple[Hop, ...]]:
        other = edge.target if forward else edge.source
        return self.view.node(other), (*why, hop_of(self.view, edge, forward))

    def run(self, seeds: Iterable[Node]) -> list[Affected]:
        seeded = list(seeds)
        seed_ids = {s.id for s in seeded}
        for seed in seeded:
            self.queue.append((seed, (), 0, True))
        expanded: set[str] = set()
        while self.queue:
            node, why, depth, changed = self.queue.popleft()
            if node.id in expanded:
                continue
            expanded.add(node.id)
            if node.kind is NodeKind.SYMBOL:
                self.symbol(node, why, depth, changed)
            elif node.kind is NodeKind.INTERFACE:
                self.interface(node, why, depth)
            elif node.kind is NodeKind.FILE:
                self.file(node, why, depth)
        return [a for a in self.found.values() if a.node not in seed_ids]

    def symbol(self, node: Node, why: tuple[Hop, ...], depth: int, changed: bool) -> None:
        for edge in self.edges(node.id, _E.DEFINES, "in"):
            file, path = self.step(edge, False, why)
            if file is not None and changed:
                self.add(file, Category.DEFINITION, path)
                self.component_tests(file, path)
        for edge in self.edges(node.id, _E.COVERS, "in"):
            test, path = self.step(edge, False, why)
            if test is not None:
                self.add(test, Category.TEST, path)
        if changed or self.opts.mode is Mode.CONSERVATIVE:
            self.docs_of(node, why)
        if changed and node.name.endswith(".__init__"):  # the constructor: the class's signature
            for edge in self.edges(node.id, _E.CONTAINS, "in"):
                owner, path = self.step(edge, False, why)
                if owner is not None and owner.kind is NodeKind.SYMBOL:
                    self.docs_of(owner, path)
                    self.interfaces_of(owner, path, depth)
        if not changed:
            self.callers(node, why, depth)
            return
        if not why:  # a changed class: its members change with it
            for edge in self.edges(node.id, _E.CONTAINS, "out"):
                member, path = self.step(edge, True, why)
                if member is not None and member.kind is NodeKind.SYMBOL:
                    self.queue.append((member, (), 0, True))
        for forward in (True, False):  # the base method and its other overrides change too
            for edge in self.edges(node.id, _E.OVERRIDES, "out" if forward else "in"):
                other, path = self.step(edge, forward, why)
                if other is not None and self.add(other, Category.OVERRIDE, path):
                    self.queue.append((other, path, depth, True))
        self.interfaces_of(node, why, depth)
        self.callers(node, why, depth)

    def docs_of(self, node: Node, why: tuple[Hop, ...]) -> None:
        """Pages declaring the node, sections naming it in a code span (both modes) and
        sections whose code samples call it (conservative)."""
        found = self.view.neighbours(node.id, {_E.DESCRIBES}, "in", self.allowed | _MENTION)
        if self.opts.mode is Mode.PRECISE:  # a sample calling it: conservative only
            found = [e for e in found if any(ev.detail != SAMPLE for ev in e.evidence)]
        for edge in sorted(found, key=lambda e: (e.source, e.target)):
            doc, path = self.step(edge, False, why)
            if doc is not None:
                self.add(doc, Category.DOC, path)

    def interfaces_of(self, node: Node, why: tuple[Hop, ...], depth: int) -> None:
        for edge in self.edges(node.id, _E.IMPLEMENTS, "out"):
            iface, path = self.step(edge, True, why)
            if iface is not None and self.add(iface, Category.INTERFACE, path):
                self.queue.append((iface, path, depth, True))

    def component_tests(self, file: Node, why: tuple[Hop, ...]) -> None:
        """Tests covering the component that holds a changed file: to rerun."""
        for edge in self.edges(file.id, _E.CONTAINS, "in"):
            comp, path = self.step(edge, False, why)
            if comp is None or comp.kind is not NodeKind.COMPONENT:
                continue
            for cover in self.edges(comp.id, _E.COVERS, "in"):
                test, tpath = self.step(cover, False, path)
                if test is not None:
                    self.add(test, Category.RERUN, tpath)

    def callers(self, node: Node, why: tuple[Hop, ...], depth: int) -> None:
        if depth >= self.opts.max_depth:
            return
        callees = [(node, why)]
        if node.name.endswith(".__init__"):  # constructing the class calls its __init__
            for edge in self.edges(node.id, _E.CONTAINS, "in"):
                owner, path = self.step(edge, False, why)
                if owner is not None and owner.kind is NodeKind.SYMBOL:
                    for cls, cpath in [(owner, path), *self.heirs(owner, path)]:
                        callees.append((cls, cpath))
                        for cover in self.edges(cls.id, _E.COVERS, "in"):
                            test, tpath = self.step(cover, False, cpath)
                            if test is not None:
                                self.add(test, Category.TEST, tpath)
        for callee, via in callees:
            self.callers_of(callee, via, depth)
        if self.opts.mode is Mode.CONSERVATIVE:
            for edge in self.edges(node.id, _E.DEFINES, "in"):
                file, path = self.step(edge, False, why)
                if file is not None:
                    self.file(file, path, depth)

    def heirs(self, cls: Node, why: tuple[Hop, ...]) -> list[tuple[Node, tuple[Hop, ...]]]:
        """Subclasses of ``cls`` (transitively) defining no ``__init__`` of their own:
        constructing one runs ``cls``'s constructor."""
        out: list[tuple[Node, tuple[Hop, ...]]] = []
        todo, seen = [(cls, why)], {cls.id}
        while todo:
            base, path = todo.pop()
            for edge in self.edges(base.id, _E.INHERITS, "in"):
                sub, spath = self.step(edge, False, path)
                if sub is None or sub.id in seen or self.view.node(f"{sub.id}.__init__"):
                    continue
                seen.add(sub.id)
                out.append((sub, spath))
                todo.append((sub, spath))
        return out

    def callers_of(self, node: Node, why: tuple[Hop, ...], depth: int) -> None:
        for edge in self.edges(node.id, _E.CALLS, "in"):
            caller, path = self.step(edge, False, why)
            if caller is None:
                continue
            category = Category.CALLER
            if caller.kind is NodeKind.COMPONENT:  # a declared dependency (front matter)
                category = Category.CONSUMER
            if self.add(caller, category, path) and caller.kind is NodeKind.SYMBOL:
                self.queue.append((caller, path, depth + 1, False))
        conservative = self.opts.mode is Mode.CONSERVATIVE
        for hop in loose_index(self.view).hops(node, conservative):
            caller = self.view.node(hop.source)
            if caller is None:
                continue
            in_test = caller.kind is NodeKind.TEST or bool(caller.get("test"))
            category = Category.TEST if in_test else Category.CALLER  # a fixture: a test file
            via = (*why, hop)
            if self.add(caller, category, via) and caller.kind is NodeKind.SYMBOL:
                self.queue.append((caller, via, depth + 1, False))

    def interface(self, node: Node, why: tuple[Hop, ...], depth: int) -> None:
        for edge in self.edges(node.id, _E.IMPLEMENTS, "in"):
            impl, path = self.step(edge, False, why)
            if impl is not None and self.add(impl, Category.IMPLEMENTATION, path):
                self.queue.append((impl, path, depth, True))
        for edge in self.edges(node.id, _E.DEFINES, "in"):
            contract, path = self.step(edge, False, why)
            if contract is not None:
                self.add(
                    contract, Category.CONTRACT, path, key=f"contract:{node.name}", line=node.line
                )
        for edge in self.edges(node.id, _E.DESCRIBES, "in"):
            doc, path = self.step(edge, False, why)
            if doc is not None:
                self.add(doc, Category.DOC, path)
        for edge in self.edges(node.id, _E.STEP, "in"):
            scenario, path = self.step(edge, False, why)
            if scenario is not None:
                hop = path[-1]
                self.add(
                    scenario,
                    Category.SCENARIO_STEP,
                    path,
                    key=f"{scenario.id}#{hop.line}",
                    line=hop.line,
                )
        for edge in self.edges(node.id, _E.CONSUMES, "in"):
            comp, path = self.step(edge, False, why)
            if comp is not None and comp.kind is NodeKind.COMPONENT:
                self.add(comp, Category.CONSUMER, path)

    def file(self, node: Node, why: tuple[Hop, ...], depth: int) -> None:
        """A changed file with no changed definition, or (conservative) a changed symbol's
        file: the files importing it."""
        if depth >= self.opts.max_depth:
            return
        for edge in self.edges(node.id, _E.IMPORTS, "in"):
            importer, path = self.step(edge, False, why)
            added = importer is not None and self.add(importer, Category.IMPORTER, path)
            if added and importer is not None and self.opts.mode is Mode.CONSERVATIVE:
                self.queue.append((importer, path, depth + 1, False))


def _keeps(old: Affected, new: Affected) -> bool:
    """Whether ``old`` stays the item of its node: the better path wins, except that a test
    calling a changed symbol is a call site whichever way it is also reached as a test to
    rerun (covering the changed file's component)."""
    if (old.category is Category.RERUN) != (new.category is Category.RERUN):
        return new.category is Category.RERUN
    return old.rank_key() <= new.rank_key()


def walk(view: MapView, seeds: Iterable[Node], options: WalkOptions) -> list[Affected]:
    """Everything the change of ``seeds`` affects, ranked most certain first."""
    found = _Walk(view, options).run(seeds)
    return sorted(found, key=Affected.rank_key)
