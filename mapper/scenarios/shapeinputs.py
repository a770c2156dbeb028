"""Lists of the ops whose inputs carry shapes, which a new op with such an input joins.

An ONNX input whose type allows integer tensors only, of an op that has data of other types too,
and that is no tensor of data indices or lengths (``*indices``, ``*_ids``, ``*_lens``), carries
a shape, sizes or axes that a compiler needs as constants:
``Reshape``'s ``shape``, ``Col2Im``'s ``image_shape``, ``AffineGrid``'s ``size``. A stack that
binds such inputs as constants keeps a table of them, and a page lists them. Where the new op
has such an input, every literal or doc section naming at least :data:`LEAST` ONNX operators
with such inputs and as many different inputs among them (not one family's list: the
reductions' ``axes``), they being at least half the ONNX operators it names, gains the new
op's entry — whether the similar op has such an input or not: the table names ONNX operators
(``Reshape``, ``Squeeze``) more than the stack's own ops, so it is no list of those that the
similar op's footprint would hold (``Pad``'s ``pads`` are in it, yet CenterCropPad's ``shape``
had to be found this way). Read from the ``onnx`` package's schemas, offline; no such list
without it.
"""

from __future__ import annotations

import re
from functools import cache

from mapper.impact.mapview import EvidenceKind, MapView
from mapper.impact.records import Hop
from mapper.model import NodeKind
from mapper.scenarios import similar
from mapper.scenarios.records import ChangePoint, PointKind

LEAST = 3
_INTS = frozenset(f"tensor({t}{n})" for t in ("int", "uint") for n in (8, 16, 32, 64))
_DATA = re.compile(r"(?:indices|_ids|_lens|lengths)$")
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


@cache
def shape_inputs() -> dict[str, tuple[str, ...]]:
    """ONNX operator name (default domain) → its shape inputs; empty without ``onnx``."""
    out: dict[str, tuple[str, ...]] = {}
    for schema in similar.onnx_schemas():
        allowed = {c.type_param_str: set(c.allowed_type_strs) for c in schema.type_constraints}
        ints = [allowed.get(i.type_str, {i.type_str}) <= _INTS for i in schema.inputs]
        out[schema.name] = (
            tuple(
                i.name
                for i, whole in zip(schema.inputs, ints, strict=True)
                if whole and not _DATA.search(i.name)
            )
            if not all(ints)  # an op on integers alone (BitShift) has data, not shapes
            else ()
        )
    return out


def applies(name: str) -> bool:
    """Whether the new op ``name`` has a shape input."""
    return bool(shape_inputs().get(name))


def lists_them(names: set[str]) -> bool:
    """Whether the ONNX operator names ``names`` (all those a literal or section holds) are a
    list of the ops with shape inputs."""
    ops = shape_inputs()
    named = {n for n in names if n in ops}
    shaped = {n for n in named if ops[n]}
    inputs = {i for n in shaped for i in ops[n]}  # a family's list (the reductions' axes) has one
    return len(shaped) >= LEAST and len(inputs) >= LEAST and 2 * len(shaped) >= len(named)


def doc_lists(view: MapView, name: str) -> list[ChangePoint]:
    """Doc sections listing the ops with shape inputs (see the module docstring)."""
    out = []
    for node in view.nodes(NodeKind.DOC):
        text = str(node.get("text") or "")
        if not text or not lists_them(set(_TOKEN.findall(text))):
            continue
        why = f"{node.id} lists the ops whose inputs carry shapes; {name}'s " + ", ".join(
            shape_inputs()[name]
        )
        hop = Hop(node.id, node.id, "names", EvidenceKind.DOC_MENTION, node.path, node.line,
                  0.7, True, why)  # fmt: skip
        out.append(
            ChangePoint(
                PointKind.DOC,
                None,
                node.path,
                node.line,
                node.id,
                node.id,
                f"add {name} to the shape inputs {node.id} lists ({why})",
                (hop,),
            )
        )
    return out
