"""``stackmap scenario errors [FAULT]``: per fault class, who detects, reports, cleans up, retries.

A fault class is an exception class of a layer (a class spelt ``*Error``, ``*Fault``,
``*Exception`` or ``*Timeout``). From the map:

- detects: the definitions that construct it (``raise X(...)`` is a call to the class);
- reports: the contract interfaces whose ``errors`` clause names it (the upper side of those
  contracts sees it), and the pages describing it;
- cleans up / retries: definitions named for recovery (``cleanup``, ``release``, ``reset``,
  ``abort`` … / ``retry``, ``recover``, ``restart`` …) from whose calls, a few levels deep, a
  detecting definition is reached — they run where the fault arises — and, where the map
  records references, the definitions naming the class (``except X``).

A fault nobody detects, nobody reports, or after which nobody cleans up or retries is a hole.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from mapper.impact.mapview import CODE_EVIDENCE, MapView, Node, cite
from mapper.model import EdgeKind, NodeKind
from mapper.scenarios import vocab

_FAULT = re.compile(r"(Error|Fault|Exception|Timeout)$")
CLEANUP = frozenset(
    {
        "cleanup",
        "clean",
        "release",
        "reset",
        "abort",
        "rollback",
        "teardown",
        "close",
        "drain",
        "reclaim",
        "free",
        "destroy",
        "discard",
        "cancel",
    }
)
RETRY = frozenset(
    {
        "retry",
        "retries",
        "recover",
        "recovery",
        "restart",
        "resubmit",
        "replay",
        "reconnect",
        "backoff",
    }
)


@dataclass(frozen=True, slots=True)
class Role:
    node: str
    layer: str | None
    at: str  # path:line of the evidence
    evidence: str  # evidence kind, or "call path" for recovery found through calls

    def to_json(self) -> dict[str, Any]:
        return {"node": self.node, "layer": self.layer, "at": self.at, "evidence": self.evidence}


@dataclass(frozen=True, slots=True)
class FaultWalk:
    fault: str
    layer: str | None
    detects: tuple[Role, ...]
    reports: tuple[Role, ...]
    cleans_up: tuple[Role, ...]
    retries: tuple[Role, ...]

    @property
    def holes(self) -> list[str]:
        out = []
        for name, roles in (("detects", self.detects), ("reports", self.reports)):
            if not roles:
                out.append(f"nobody {name}")
        if not self.cleans_up and not self.retries:
            out.append("nobody cleans up or retries")
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "fault": self.fault,
            "layer": self.layer,
            "detects": [r.to_json() for r in self.detects],
            "reports": [r.to_json() for r in self.reports],
            "cleans_up": [r.to_json() for r in self.cleans_up],
            "retries": [r.to_json() for r in self.retries],
            "holes": self.holes,
        }


def fault_classes(view: MapView, pattern: str | None = None) -> list[Node]:
    found = [
        n
        for n in view.nodes(NodeKind.SYMBOL)
        if n.get("symbol_kind") == "class"
        and n.layer
        and _FAULT.search(vocab.short_name(n))
        and not vocab.short_name(n).startswith("_")
        and (pattern is None or pattern.lower() in n.name.lower())
    ]
    return sorted(found, key=lambda n: (view.layers().index(n.layer or ""), n.id))


def walk_errors(view: MapView, fault: str | None = None, depth: int = 3) -> list[FaultWalk]:
    """One walk per fault class (those whose name contains ``fault``, case aside)."""
    interfaces = [n for n in view.nodes(NodeKind.INTERFACE) if n.get("errors")]
    recovery = [
        n
        for n in view.nodes(NodeKind.SYMBOL)
        if n.layer and set(vocab.words(vocab.short_name(n))) & (CLEANUP | RETRY)
    ]

    @cache
    def reach(node_id: str) -> frozenset[str]:
        seen = {node_id}
        frontier = [node_id]
        for _ in range(depth):
            nxt = []
            for at in frontier:
                for e in view.neighbours(at, {EdgeKind.CALLS}, "out", CODE_EVIDENCE):
                    if e.target not in seen:
                        seen.add(e.target)
                        nxt.append(e.target)
            frontier = nxt
        return frozenset(seen)

    out = []
    for cls in fault_classes(view, fault):
        short = vocab.short_name(cls)
        raises = view.neighbours(cls.id, {EdgeKind.CALLS}, "in", CODE_EVIDENCE)
        detects = tuple(
            sorted(
                {
                    Role(e.source, _layer(view, e.source), cite(e.citation), "code_reference")
                    for e in raises
                },
                key=lambda r: r.node,
            )
        )
        named = re.compile(rf"\b{re.escape(short)}\b")
        reports = [
            Role(i.id, i.get("upper"), f"{i.path}:{i.line}", "contract")
            for i in interfaces
            if named.search(str(i.get("errors")))
        ]
        for e in view.neighbours(cls.id, {EdgeKind.DESCRIBES}, "in"):
            reports.append(Role(e.source, None, cite(e.citation), e.citation.kind.value))
        handlers = {e.source for e in view.neighbours(cls.id, {EdgeKind.REFERENCES}, "in")}
        raisers = {r.node for r in detects}
        cleans, retries = [], []
        for n in recovery:
            path_hit = bool(reach(n.id) & raisers)
            if not path_hit and n.id not in handlers:
                continue
            ws = set(vocab.words(vocab.short_name(n)))
            role = Role(
                n.id,
                n.layer,
                f"{n.path}:{n.line}",
                "reference" if n.id in handlers else "call path",
            )
            if ws & RETRY:
                retries.append(role)
            if ws & CLEANUP:
                cleans.append(role)
        out.append(
            FaultWalk(
                short,
                cls.layer,
                detects,
                tuple(sorted(reports, key=lambda r: r.node)),
                tuple(sorted(cleans, key=lambda r: r.node)),
                tuple(sorted(retries, key=lambda r: r.node)),
            )
        )
    return out


def _layer(view: MapView, node_id: str) -> str | None:
    node = view.node(node_id)
    return node.layer if node is not None else None
