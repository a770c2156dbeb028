"""The records an impact analysis answers with: frozen, typed, each with ``to_json()``.

Every affected item carries ``why``: the explanation path from a changed node to it, hop by
hop, each hop cited (path:line) with the kind of evidence it rests on.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from mapper.impact.mapview import STRENGTH, Edge, EvidenceKind, MapView


class Mode(enum.StrEnum):
    PRECISE = "precise"  # code-evidenced edges (and explicit declarations) only
    CONSERVATIVE = "conservative"  # every plausible edge: imports, mentions, similarity


class Category(enum.StrEnum):
    DEFINITION = "definition"  # the file defining a changed node
    CALLER = "caller"  # code that calls a changed (or affected) symbol
    IMPLEMENTATION = "implementation"  # the code implementing a changed interface
    INTERFACE = "interface"  # an interface a changed symbol implements
    OVERRIDE = "override"  # a base method or an override of a changed method
    CONSUMER = "consumer"  # a component consuming a changed interface
    IMPORTER = "importer"  # a file importing a changed file
    TEST = "test"  # a test calling a changed symbol: a call site, and a test to rerun
    RERUN = "rerun"  # a test covering a changed symbol's component: rerun, no edit expected
    DOC = "doc"  # a doc page or section to update
    CONTRACT = "contract"  # a contract entry to update
    SCENARIO_STEP = "scenario_step"  # a scenario step to re-walk


@dataclass(frozen=True, slots=True)
class Hop:
    """One step of an explanation: ``source`` -[edge]-> ``target`` as the map holds it,
    walked ``forward`` (along the edge) or backward, cited with its strongest evidence."""

    source: str
    target: str
    edge: str
    evidence: EvidenceKind
    path: str | None
    line: int | None
    confidence: float
    forward: bool
    detail: str = ""  # how a hop the map holds no edge for was found (a loose call's match)

    def cite(self) -> str:
        where = self.path or "-"
        return f"{where}:{self.line}" if self.line is not None else where

    def render(self) -> str:
        arrow = f"-{self.edge}->" if self.forward else f"<-{self.edge}-"
        a, b = (self.source, self.target) if self.forward else (self.target, self.source)
        note = f"; {self.detail}" if self.detail else ""
        return f"{a} {arrow} {b}  [{self.cite()} {self.evidence.value}{note}]"

    def to_json(self) -> dict[str, Any]:
        return {
            "from": self.source,
            "to": self.target,
            "edge": self.edge,
            "direction": "forward" if self.forward else "backward",
            "evidence": self.evidence.value,
            "at": self.cite(),
            "path": self.path,
            "line": self.line,
            "confidence": self.confidence,
            "detail": self.detail,
        }


@dataclass(frozen=True, slots=True)
class Changed:
    """A changed node (or a removed one, ``node`` None) and how it changed."""

    node: str | None
    name: str
    kind: str
    path: str | None
    line: int | None
    layer: str | None
    impact: str  # breaking | compatible | unclassified (a target named directly)
    messages: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "name": self.name,
            "kind": self.kind,
            "path": self.path,
            "line": self.line,
            "layer": self.layer,
            "impact": self.impact,
            "how": list(self.messages),
        }


@dataclass(frozen=True, slots=True)
class Affected:
    node: str
    kind: str
    name: str
    path: str | None
    line: int | None
    layer: str | None
    component: str | None
    category: Category
    why: tuple[Hop, ...]
    certainty: float

    @property
    def weakest(self) -> EvidenceKind:
        return min((h.evidence for h in self.why), key=STRENGTH.__getitem__)

    @property
    def depth(self) -> int:
        return len(self.why)

    def rank_key(self) -> tuple[int, float, int, str, int]:
        """Most certain first: strongest weakest-evidence, then confidence, then nearness."""
        return (
            -STRENGTH[self.weakest],
            -self.certainty,
            self.depth,
            self.path or "",
            self.line or 0,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "kind": self.kind,
            "name": self.name,
            "path": self.path,
            "line": self.line,
            "layer": self.layer,
            "component": self.component,
            "category": self.category.value,
            "weakest_evidence": self.weakest.value,
            "certainty": round(self.certainty, 4),
            "why": [h.to_json() for h in self.why],
        }


@dataclass(frozen=True, slots=True)
class RankedFile:
    path: str
    layer: str | None
    categories: tuple[str, ...]
    weakest: EvidenceKind
    certainty: float
    because: str  # the node id of the item that ranks the file

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "layer": self.layer,
            "categories": list(self.categories),
            "weakest_evidence": self.weakest.value,
            "certainty": round(self.certainty, 4),
            "because": self.because,
        }


@dataclass(frozen=True, slots=True)
class Effort:
    layers: tuple[str, ...]
    files: int
    code_files: int
    tests: int
    docs: int
    roles: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "layers": list(self.layers),
            "files": self.files,
            "code_files": self.code_files,
            "tests": self.tests,
            "docs": self.docs,
            "roles": list(self.roles),
        }


@dataclass(frozen=True, slots=True)
class ImpactReport:
    target: str
    mode: Mode
    changed: tuple[Changed, ...]
    affected: tuple[Affected, ...]  # ranked, most certain first
    files: tuple[RankedFile, ...]  # ranked
    effort: Effort
    diff_paths: tuple[str, ...] = ()  # every file of the analysed diff (none for a target)

    def of(self, *categories: Category) -> list[Affected]:
        return [a for a in self.affected if a.category in categories]

    def by_layer(self) -> dict[str, list[Affected]]:
        """Affected code grouped by layer, in the order items rank (tests/docs excluded)."""
        out: dict[str, list[Affected]] = {}
        skip = (
            Category.TEST,
            Category.RERUN,
            Category.DOC,
            Category.CONTRACT,
            Category.SCENARIO_STEP,
        )
        for item in self.affected:
            if item.category not in skip:
                out.setdefault(item.layer or "(no layer)", []).append(item)
        return out

    @property
    def breaking(self) -> list[Changed]:
        return [c for c in self.changed if c.impact == "breaking"]

    def to_json(self) -> dict[str, Any]:
        return {
            "target": self.target,
            "mode": self.mode.value,
            "changed": [c.to_json() for c in self.changed],
            "affected": [a.to_json() for a in self.affected],
            "by_layer": {k: [a.node for a in v] for k, v in self.by_layer().items()},
            "files": [f.to_json() for f in self.files],
            "tests": [a.node for a in self.of(Category.TEST, Category.RERUN)],
            "docs": [a.node for a in self.of(Category.DOC)],
            "contracts": [a.node for a in self.of(Category.CONTRACT)],
            "scenario_steps": [a.node for a in self.of(Category.SCENARIO_STEP)],
            "effort": self.effort.to_json(),
            "diff_files": list(self.diff_paths),
        }


def hop_of(view: MapView, edge: Edge, forward: bool) -> Hop:
    """One explanation hop: the edge walked ``forward`` or backward, cited (path:line)."""
    ev = view.citation(edge)
    return Hop(
        edge.source, edge.target, edge.kind.value, ev.kind, ev.path, ev.line, ev.confidence, forward
    )
