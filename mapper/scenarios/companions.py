"""Generated companions of a predicted change: what a code generator rewrites from it.

protoc writes ``NAME_pb2.py`` (and, with ``--pyi_out``, the stub ``NAME_pb2.pyi``) from
``NAME.proto``. A proto enum gaining the new op's value therefore changes the stub (which
repeats each value, in its enum class and at module level) and the generated module beside
it. Both are predicted together with the proto value, as points of kind ``generated``: they
are regenerated, not edited. The stub is on the map; the generated module usually is not
(configurations ignore ``*_pb2.py``), so it is predicted where it lies beside the stub.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable

from mapper.impact.mapview import EvidenceKind, MapView, Node
from mapper.impact.records import Hop
from mapper.model import NodeKind
from mapper.scenarios import vocab
from mapper.scenarios.records import ChangePoint, PointKind


def _stubs(view: MapView, proto: str) -> list[Node]:
    stem = posixpath.basename(proto).removesuffix(".proto")
    return [
        n
        for n in view.nodes(NodeKind.FILE)
        if n.path and posixpath.basename(n.path) == f"{stem}_pb2.pyi"
    ]


def proto_companions(
    view: MapView, points: Iterable[ChangePoint], forms: dict[str, str], name: str
) -> list[ChangePoint]:
    """The stub entries and generated modules of each proto value point in ``points``."""
    out: list[ChangePoint] = []
    for point in points:
        if point.kind is not PointKind.VOCABULARY or not (point.path or "").endswith(".proto"):
            continue
        value = vocab.short_name_of(point.like)
        for stub in _stubs(view, point.path or ""):
            entries = [
                n
                for n in view.nodes(NodeKind.SYMBOL)
                if n.path == stub.path and vocab.short_name(n) == value
            ]
            for entry in entries:
                out.append(_point(view, entry.path, entry.line, point, entry.name, forms, name))
            module = (stub.path or "").removesuffix(".pyi") + ".py"
            if entries and (view.config.root / module).is_file():
                out.append(_point(view, module, 1, point, "", forms, name))
    return out


def _point(
    view: MapView,
    path: str | None,
    line: int | None,
    source: ChangePoint,
    like: str,
    forms: dict[str, str],
    name: str,
) -> ChangePoint:
    hop = Hop(
        f"file:{path}",
        source.like,
        "generated_from",
        EvidenceKind.DEFINITION,
        path,
        line,
        0.9,
        True,
        f"protoc generates {path} from {source.path}",
    )
    return ChangePoint(
        PointKind.GENERATED,
        view.config.layer_of(path) if path else None,
        path,
        line,
        source.like,
        vocab.rename(like, forms, vocab.op_words(name)) if like else "",
        f"regenerate {path} from {source.path}: it will hold {name}'s value"
        + (f" beside {vocab.short_name_of(like)}" if like else ""),
        (hop,),
    )
