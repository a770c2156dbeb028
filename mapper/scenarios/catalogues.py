"""Doc tables of a folder's modules: the row of the module a new op's code goes into.

A page section that describes at least :data:`SIBLINGS` modules of one folder, one row each
(``| stack/adapter/ops_resize.py | Resize, Upsample, GridSample | … |``), is a catalogue of that
folder. Such a page is about many modules, so the rule for pages about a few
(:func:`mapper.scenarios.newop_places.docs`) leaves it out; but its rows say which ops each
module holds:

- where the new op's code goes into a module the catalogue has a row for, and that row names
  the similar op, the row lists the new op too;
- where the new op's code goes into a new module of the folder, modelled on one the catalogue
  has a row for, the catalogue gains a row for the new module.

A row is the line the section's mention of the module is cited at; whether it names the similar
op is read from that line of the page.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable

from mapper.impact.mapview import Edge, MapView
from mapper.impact.records import hop_of
from mapper.model import EdgeKind
from mapper.scenarios import footprint, vocab
from mapper.scenarios.records import ChangePoint, PointKind

SIBLINGS = 3  # modules of one folder a section describes, a row each: a catalogue
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


def rows(
    view: MapView,
    points: Iterable[ChangePoint],
    new_modules: dict[str, set[str]],
    spelt: set[str],
    name: str,
) -> list[ChangePoint]:
    """The catalogue rows the new op's code points (``points``, its implementations) and its
    new modules (``new_modules``: each → the similar op's modules it mirrors) extend."""
    out: dict[str, ChangePoint] = {}
    for point in points:
        if point.kind is not PointKind.IMPLEMENTATION or not point.path:
            continue
        if point.path in new_modules:
            for mirrored in sorted(new_modules[point.path]):
                for edge in _catalogued(view, mirrored):
                    why = f"add a row for {point.path} beside {mirrored}'s, for {name}"
                    out.setdefault(edge.source, _point(view, edge, point.like, why))
            continue
        for edge in _catalogued(view, point.path):
            if _row_names(view, edge, spelt):
                why = f"add {name} to the row of {point.path}, which lists the similar op"
                out.setdefault(edge.source, _point(view, edge, point.like, why))
    return list(out.values())


def _catalogued(view: MapView, path: str) -> list[Edge]:
    """The mentions of the module ``path`` by sections cataloguing its folder."""
    folder = posixpath.dirname(path)
    out = []
    for edge in view.neighbours(f"file:{path}", {EdgeKind.DESCRIBES}, "in"):
        rows = {  # each module of the folder the section describes → the line citing it
            e.target: view.citation(e).line
            for e in view.neighbours(edge.source, {EdgeKind.DESCRIBES}, "out")
            if e.target.startswith("file:")
            and posixpath.dirname(e.target.removeprefix("file:")) == folder
        }
        if len(rows) >= SIBLINGS and len(set(rows.values())) == len(rows):
            out.append(edge)
    return out


def _row_names(view: MapView, edge: Edge, spelt: set[str]) -> bool:
    """Whether the line citing the module names the similar op."""
    ev = view.citation(edge)
    lines = footprint.source_lines(view, ev.path or "")
    line = lines[ev.line - 1] if ev.line and 0 < ev.line <= len(lines) else ""
    return any(vocab.runs(word) & spelt for word in _TOKEN.findall(line))


def _point(view: MapView, edge: Edge, like: str, why: str) -> ChangePoint:
    ev = view.citation(edge)
    return ChangePoint(
        PointKind.DOC,
        None,
        ev.path,
        ev.line,
        like,
        edge.source,
        f"update {edge.source}: {why}",
        (hop_of(view, edge, False),),
    )
