"""Code that names the new op before it exists.

A string spelling the new op's name as given (``"GridSample"``, case kept, a whole word) in a
layer's code, or in a test file that is not a tool's (:func:`~.footprint.tests_a_tool`), names
an op the stack does not have yet: the example of an unsupported op (``make_node("GridSample",
…)`` expecting an ``UnsupportedOpError``), a skip list, a conformance filter. Once the op lands
that text is wrong, so its file changes: one change point per file, at the first such line. No
definition is predicted to gain a line spelling the op there (the line is rewritten to name
another one).
"""

from __future__ import annotations

import re

from mapper.impact.mapview import MapView
from mapper.impact.records import Hop
from mapper.ingest.code import CODE_LANGUAGES, language_for
from mapper.model import EvidenceKind, NodeKind
from mapper.scenarios.footprint import source_lines, tests_a_tool
from mapper.scenarios.records import ChangePoint, PointKind


def mentions(view: MapView, name: str) -> list[ChangePoint]:
    """A point per file naming ``name`` in a string before the op exists (module docstring)."""
    quoted = re.compile(rf"[\"'][^\"'\n]*\b{re.escape(name)}\b")
    out = []
    for file in view.nodes(NodeKind.FILE):
        path = file.path or ""
        if language_for(path) not in CODE_LANGUAGES or view.config.is_generated(path):
            continue
        layer = view.config.layer_of(path)
        test = view.config.is_test(path)
        if layer is None and (not test or tests_a_tool(view, file.id)):
            continue
        lines = source_lines(view, path)
        found = next((i for i, text in enumerate(lines, 1) if quoted.search(text)), None)
        if found is None:
            continue
        why = f"a string at {path}:{found} names {name}, which the stack does not have yet"
        hop = Hop(
            file.id, file.id, "mentions", EvidenceKind.CODE_REFERENCE, path, found, 0.8, True, why
        )
        out.append(
            ChangePoint(
                PointKind.USE,
                layer,
                path,
                found,
                file.id,
                "",
                f"rewrite what {path}:{found} says of {name} (an op missing until now): {why}",
                (hop,),
            )
        )
    return out
