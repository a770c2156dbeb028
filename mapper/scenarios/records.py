"""The records scenario walks answer with: frozen, typed, each with ``to_json()``.

Every change point and every step carries the evidence it rests on (path:line and kind)."""

from __future__ import annotations

import enum
from dataclasses import dataclass
from typing import Any

from mapper.impact.records import Hop


class PointKind(enum.StrEnum):
    VOCABULARY = "vocabulary"  # an enum / proto enum / C header value to add
    IMPLEMENTATION = "implementation"  # a function, method or class to write
    REGISTRATION = "registration"  # a registry the op must enter
    USE = "use"  # code that names the similar op's value and must name the new one too
    TEST = "test"  # a test to add
    DOC = "doc"  # a doc page or section to update
    CONTRACT = "contract"  # a contract interface whose text lists the ops
    GENERATED = "generated"  # generated from a changed source (a proto's stub): regenerate


@dataclass(frozen=True, slots=True)
class ChangePoint:
    """One place a new op must touch, derived from where the similar op lives."""

    kind: PointKind
    layer: str | None
    path: str | None
    line: int | None
    like: str  # the node of the similar op this point is modelled on
    predicted: str  # the name the new op's counterpart would take
    action: str
    why: tuple[Hop, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "layer": self.layer,
            "path": self.path,
            "line": self.line,
            "like": self.like,
            "predicted": self.predicted,
            "action": self.action,
            "why": [h.to_json() for h in self.why],
        }


@dataclass(frozen=True, slots=True)
class LayerPlan:
    layer: str
    points: tuple[ChangePoint, ...]
    no_change: str | None = None  # why the layer needs nothing, with its evidence

    def to_json(self) -> dict[str, Any]:
        return {
            "layer": self.layer,
            "points": [p.to_json() for p in self.points],
            "no_change": self.no_change,
        }


@dataclass(frozen=True, slots=True)
class NewOpWalk:
    op: str
    like: str
    candidates: tuple[tuple[str, float], ...]  # similar existing ops, most similar first
    layers: tuple[LayerPlan, ...]
    outside: tuple[ChangePoint, ...]  # tests and docs (no layer)
    #: The tool chose ``like`` though no known op is much like the new one
    #: (:data:`mapper.scenarios.similar.WEAK`): the footprint may be the wrong one to follow.
    weak: bool = False

    @property
    def points(self) -> list[ChangePoint]:
        return [p for plan in self.layers for p in plan.points] + list(self.outside)

    def files(self) -> list[str]:
        return sorted({p.path for p in self.points if p.path})

    def to_json(self) -> dict[str, Any]:
        return {
            "op": self.op,
            "like": self.like,
            "candidates": [{"op": c, "similarity": round(s, 4)} for c, s in self.candidates],
            "weak_match": self.weak,
            "layers": [plan.to_json() for plan in self.layers],
            "outside_layers": [p.to_json() for p in self.outside],
            "files": self.files(),
            "symbols": sorted({p.predicted for p in self.points if p.predicted}),
        }


def unique(points: list[ChangePoint]) -> list[ChangePoint]:
    """One point per (kind, place), and per predicted name for tests and implementations (the
    tests and definitions going into a new module share its place), an unnamed implementation
    dropped where a named one shares its place: a line both keys a registry by the op's value
    and registers its counterpart is one registration."""
    out: dict[tuple[str, str | None, int | None, str], ChangePoint] = {}
    for point in points:
        named = point.kind in (PointKind.TEST, PointKind.IMPLEMENTATION)
        key = (
            point.kind.value if point.kind is not PointKind.REGISTRATION else "r",
            point.path,
            point.line,
            point.predicted if named else "",
        )
        out.setdefault(key, point)
    written = {
        (p.path, p.line) for p in out.values() if p.kind is PointKind.IMPLEMENTATION and p.predicted
    }
    return [
        p
        for p in out.values()
        if p.kind is not PointKind.IMPLEMENTATION or p.predicted or (p.path, p.line) not in written
    ]
