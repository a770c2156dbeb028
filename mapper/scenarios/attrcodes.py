"""Codes for a new op's string attributes: the enum its kernel reads and the table its
translator decodes the names with.

A string attribute (Pad's ``mode``, ScatterND's ``reduction``, RoiAlign's ``mode``) crosses
the layers as a small int. The layer that reads it defines an enum of its values, named after
the op (or its first words) and the attribute: ``PadMode``, ``ScatterReduction``,
``RoiAlignMode``. The layer above decodes the names into its members with a table in the
module that references them. Where the map holds :data:`CONVENTION` or more such enums (read
from the ONNX schemas, offline: an attribute of type STRING of an op the map knows), each
string attribute of the new op choosing among named values (one with a default:
:func:`~.similar.choices`; Einsum's ``equation`` is free text, coded by no enum) gets,
unless an enum named after the start of the new op's name codes it already
(``ScatterReduction`` serves ScatterElements too):

- its enum, ``<NewOp><Attr>``, in the module where the new op's kernel is written;
- its table, ``<NEW_OP>_<ATTR>S``, in the layer that decodes the existing enums, in the module
  of the new op's mapping row there (its family translator, or the new op's own module where
  the row moved into one).
"""

from __future__ import annotations

from mapper.impact.mapview import EvidenceKind, MapView, Node
from mapper.impact.records import Hop
from mapper.ingest.code import python_module
from mapper.model import EdgeKind, NodeKind
from mapper.scenarios import similar, vocab
from mapper.scenarios.records import ChangePoint, PointKind

CONVENTION = 2  # enums of string attributes the map holds: the stack's convention


def attribute_codes(
    view: MapView,
    known: dict[str, list[vocab.Value]],
    name: str,
    points: list[ChangePoint],
    rows: list[ChangePoint],
) -> list[ChangePoint]:
    """An enum and a decoding table for each string attribute of the new op ``name`` no enum
    codes yet, where the map's enums follow the convention; ``rows``
    are the new op's mapping rows (:func:`~mapper.scenarios.newop_places.mapping_rows`)."""
    found = _convention(view, known)
    enums = [node for node, _, _ in found]
    own = similar.attributes({vocab.compact(name)}) or {}
    shared = {attr for _, head, attr in found if vocab.compact(name).startswith(head)}
    named = similar.choices(vocab.compact(name))  # not free text
    fresh = sorted(a for a in named if own.get(a) == "STRING" and a not in shared)
    if len(enums) < CONVENTION or not fresh:
        return []
    layers = {_layer(view, e) for e in enums}
    kernel = _place(points, PointKind.IMPLEMENTATION, layers)
    decoders = {_layer(view, n) for e in enums for n in _decoders(view, e)} - layers
    table = _followed(points, _place(rows, PointKind.USE, decoders))
    model = enums[0]
    words = vocab.words(name)
    camel = "".join(w.title() for w in words)
    out = []
    for attr in fresh:
        enum = camel + "".join(w.title() for w in attr.split("_"))
        codes = f"{'_'.join(words).upper()}_{attr.upper()}S"
        shown = ", ".join(sorted(vocab.short_name(e) for e in enums))
        detail = f"{len(enums)} enums code string attributes ({shown})"
        for place, new, what in ((kernel, enum, "an enum of"), (table, codes, "a table decoding")):
            if place is None or not place.path:
                continue
            module = python_module(place.path, view.config.python_roots)
            beside = place.predicted or f"{name}'s mapping row"
            out.append(
                ChangePoint(
                    PointKind.IMPLEMENTATION,
                    place.layer,
                    place.path,
                    place.line,
                    model.id,
                    f"{module}.{new}",
                    f"write {new}, {what} {name}'s {attr} values, beside {beside}: {detail}",
                    (_hop(model, detail),),
                )
            )
    return out


def _hop(model: Node, detail: str) -> Hop:
    return Hop(
        model.id, model.id, "convention", EvidenceKind.DEFINITION, model.path, model.line, 0.6,
        True, detail,
    )  # fmt: skip


def _convention(view: MapView, known: dict[str, list[vocab.Value]]) -> list[tuple[Node, str, str]]:
    """The classes named after an op the map knows (or its first words) and one of its
    STRING attributes, each with that compact op prefix and the attribute."""
    found = []
    for node in view.nodes(NodeKind.SYMBOL):
        if node.get("symbol_kind") != "class":
            continue
        ws = vocab.words(vocab.short_name(node))
        for cut in range(1, len(ws)):
            head, attr = "".join(ws[:cut]), "_".join(ws[cut:])
            if any(
                op.startswith(head) and (similar.attributes({op}) or {}).get(attr) == "STRING"
                for op in known
            ):
                found.append((node, head, attr))
                break
    return sorted(found, key=lambda f: f[0].id)


def _decoders(view: MapView, enum: Node) -> list[Node]:
    """The files naming a member of ``enum``."""
    out = []
    for member in view.neighbours(enum.id, {EdgeKind.CONTAINS}, "out"):
        for edge in view.neighbours(member.target, {EdgeKind.REFERENCES}, "in"):
            user = view.node(edge.source)
            if user is not None and user.path != enum.path:
                out.append(user)
    return out


def _followed(points: list[ChangePoint], row: ChangePoint | None) -> ChangePoint | None:
    """``row``, or where it went when it moved into the new op's own module (a point of
    ``points`` with its model whose action extends ``row``'s: :func:`~.capacity.rehome`)."""
    if row is None:
        return None
    for point in points:
        moved = point.path != row.path and point.action.startswith(row.action)
        if moved and point.like == row.like:
            return point
    return row


def _layer(view: MapView, node: Node) -> str | None:
    return node.layer or view.config.layer_of(node.path or "")


def _place(
    points: list[ChangePoint], kind: PointKind, layers: set[str | None]
) -> ChangePoint | None:
    """The first point of ``kind`` in one of ``layers`` with a predicted Python name."""
    found = [
        p
        for p in points
        if p.kind is kind and p.layer in layers and (p.path or "").endswith(".py") and p.predicted
    ]
    return min(found, key=lambda p: (p.path or "", p.line or 0)) if found else None
