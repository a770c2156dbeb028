"""Compare two surfaces: every interface change, classified breaking or compatible.

Breaking: a removed interface, definition, rpc, message, field, enum value, struct, ioctl or
macro; a removed or renamed parameter, a changed parameter type or order, a removed default,
a new required parameter, a changed return type or sync/async; a proto field whose number or
type changed; an rpc whose request/response type changed; changed struct fields; a changed
ioctl number or macro / enumerator value; a contract interface moved to another symbol or
switched between sync and async.
Compatible: anything added; a new parameter with a default; a changed default value.
"""

from __future__ import annotations

import enum
from collections.abc import Iterator
from dataclasses import dataclass

from mapper.model import Location, Signature
from mapper.versions.surface import Item, Surface


class Impact(enum.StrEnum):
    BREAKING = "breaking"
    COMPATIBLE = "compatible"


@dataclass(frozen=True, slots=True)
class Change:
    impact: Impact
    kind: str
    name: str
    message: str
    location: Location  # in the newer revision (the older one for removals)

    def to_dict(self) -> dict[str, str]:
        return {
            "impact": self.impact.value,
            "kind": self.kind,
            "name": self.name,
            "message": self.message,
            "location": str(self.location),
        }


def _params(old: Signature, new: Signature) -> Iterator[tuple[Impact, str]]:
    by_name = {p.name: (i, p) for i, p in enumerate(new.params)}
    for i, p in enumerate(old.params):
        if p.name not in by_name:
            yield Impact.BREAKING, f"parameter {p.name!r} removed"
            continue
        j, q = by_name[p.name]
        if j != i and p.kind == "positional" and q.kind == "positional":
            yield Impact.BREAKING, f"parameter {p.name!r} moved from position {i + 1} to {j + 1}"
        if (p.type or "") != (q.type or ""):
            yield Impact.BREAKING, f"parameter {p.name!r} type {p.type} → {q.type}"
        if p.default is not None and q.default is None:
            yield Impact.BREAKING, f"parameter {p.name!r} lost its default {p.default}"
        elif p.default is not None and p.default != q.default:
            yield Impact.COMPATIBLE, f"parameter {p.name!r} default {p.default} → {q.default}"
        if p.kind != q.kind:
            yield Impact.BREAKING, f"parameter {p.name!r} became {q.kind} (was {p.kind})"
    old_names = {p.name for p in old.params}
    for q in new.params:
        if q.name in old_names:
            continue
        if q.default is None and q.kind not in ("var_positional", "var_keyword"):
            yield Impact.BREAKING, f"new required parameter {q.name!r}"
        else:
            yield Impact.COMPATIBLE, f"new optional parameter {q.name!r}"
    if (old.returns or "") != (new.returns or ""):
        yield Impact.BREAKING, f"return type {old.returns} → {new.returns}"
    if old.is_async != new.is_async:
        was, now = ("async", "sync") if old.is_async else ("sync", "async")
        yield Impact.BREAKING, f"became {now} (was {was})"


def _item_changes(old: Item, new: Item) -> Iterator[tuple[Impact, str]]:
    if old.signature is not None and new.signature is not None:
        yield from _params(old.signature, new.signature)
    elif old.signature != new.signature and old.kind in ("python", "interface"):
        yield Impact.BREAKING, "signature removed" if new.signature is None else "signature added"
    if old.value != new.value:
        what = {
            "field": "field number/type",
            "struct": "struct fields",
            "ioctl": "ioctl number",
            "macro": "value",
            "enum-value": "enum value",
            "interface": "symbol|sync",
        }.get(old.kind, "value")
        yield Impact.BREAKING, f"{what} {old.value} → {new.value}"


def compare_surfaces(old: Surface, new: Surface) -> list[Change]:
    """Changes from ``old`` to ``new``, breaking first, then by kind and name."""
    out: list[Change] = []
    for key, item in old.items():
        if key not in new:
            msg = f"{item.kind} {item.name} removed"
            out.append(Change(Impact.BREAKING, item.kind, item.name, msg, item.location))
    for key, item in new.items():
        if key not in old:
            msg = f"{item.kind} {item.name} added"
            out.append(Change(Impact.COMPATIBLE, item.kind, item.name, msg, item.location))
            continue
        for impact, message in _item_changes(old[key], item):
            text = f"{item.kind} {item.name}: {message}"
            out.append(Change(impact, item.kind, item.name, text, item.location))
    order = {Impact.BREAKING: 0, Impact.COMPATIBLE: 1}
    return sorted(out, key=lambda c: (order[c.impact], c.kind, c.name, c.message))
