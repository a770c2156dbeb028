"""Pages that follow the ops as they are added: the new op is the next they take.

An op vocabulary of integer values numbers the ops in the order the stack added them (an
enum gains its next value, a header its next macro): its last :data:`NEWEST` values are the
newest ops. A doc section naming at least :data:`LEAST` of them is written about each op
as it comes (the conformance figures and one paragraph per op, a changelog of kernels), so
the new op, the next one, enters it too, whether or not it names the similar op. Sections
the similar op's lists already reach (:func:`~.newop_places.op_lists`) are left to them.
"""

from __future__ import annotations

import re

from mapper.impact.mapview import EvidenceKind, MapView, Node
from mapper.impact.records import Hop
from mapper.model import EdgeKind, NodeKind
from mapper.scenarios import vocab
from mapper.scenarios.records import ChangePoint, PointKind

NEWEST = 5  # the last values of an op vocabulary: the ops added most recently
LEAST = 3  # of them a section names to follow the ops as they are added
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


def newest_ops(known: dict[str, list[vocab.Value]]) -> list[str]:
    """The ops of the integer op vocabulary numbering most of them, by their values, newest
    last (its last :data:`NEWEST`); empty without one."""
    numbered: dict[str, dict[str, int]] = {}
    for op, values in known.items():
        for value in values:
            number = _integer(value.node.get("value"))
            if number is not None:
                numbered.setdefault(value.vocabulary, {})[op] = number
    if not numbered:
        return []
    order = max(numbered.values(), key=len)
    return sorted(order, key=lambda op: order[op])[-NEWEST:]


def _integer(raw: object) -> int | None:
    try:
        return int(str(raw).strip(), 0)
    except ValueError:
        return None


def sections(
    view: MapView, known: dict[str, list[vocab.Value]], name: str, points: list[ChangePoint]
) -> list[ChangePoint]:
    """A doc point for each section naming :data:`LEAST` of the newest ops, except those
    other rules' ``points`` give the new op already."""
    reached = {p.predicted for p in points if p.kind is PointKind.DOC}
    newest = newest_ops(known)
    if len(newest) < NEWEST:
        return []
    spelt = {s: op for op in newest for s in vocab.spellings(known[op])}
    out = []
    for node in view.nodes(NodeKind.DOC):
        text = str(node.get("text") or "")
        named = {spelt[w] for w in map(vocab.compact, _TOKEN.findall(text)) if w in spelt}
        if len(named) < LEAST or node.id in reached:
            continue
        latest = known[max(named, key=newest.index)]  # its numbered value is the model
        model = next(v for v in latest if _integer(v.node.get("value")) is not None)
        out.append(_point(node, model.node, named, name))
    return out


def _point(section: Node, model: Node, named: set[str], name: str) -> ChangePoint:
    detail = f"names {', '.join(sorted(named))}, {len(named)} of the {NEWEST} newest ops"
    hop = Hop(
        section.id,
        model.id,
        EdgeKind.DESCRIBES.value,
        EvidenceKind.DOC_MENTION,
        section.path,
        section.line,
        0.6,
        True,
        detail,
    )
    action = f"add {name}, the next op, to {section.id}: it {detail}"
    return ChangePoint(PointKind.DOC, None, section.path, section.line, model.id, section.id,
                       action, (hop,))  # fmt: skip
