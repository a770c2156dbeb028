"""Which definitions changed lines fall in: the spans of the nodes of each file.

A symbol spans its definition (``line`` to ``end_line``; one line when the parser gave no end).
Other nodes placed in a file (a test, an interface's contract entry, a doc section, a page's
text before its first heading) span from their line to the line before the next node of the
same kind in that file that starts on a later line (or the next ``constants`` entry of a
contract), the last one to the end of the file: nodes sharing a line (interfaces of several
layer pairs discovered at one definition) share one span. Files, layers, components and
scenarios are not definitions. Among spans of one length, the one starting later is the inner
one (a one-line definition ending on the next line does not shadow the definition starting
there).
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from mapper.model import Node, NodeKind

if TYPE_CHECKING:
    from mapper.query.map import Map

END = 10**9  # "to the end of the file"
#: What a changed line falls in (a layer, component or scenario is placed, not defined, in a file)
DEFINITIONS = frozenset({NodeKind.SYMBOL, NodeKind.TEST, NodeKind.INTERFACE, NodeKind.DOC})


def spans(m: Map) -> dict[str, list[tuple[int, int, Node]]]:
    """path → (first line, last line, node) for every placed node but files, by first line."""
    by_kind: dict[tuple[str, NodeKind], list[Node]] = defaultdict(list)
    stops: dict[str, list[int]] = defaultdict(list)  # lines that end any span before them
    for node in m.nodes():
        if node.kind is NodeKind.FILE and node.path:
            stops[node.path] += [int(c[-1]) for c in node.get("constants") or () if c[-1]]
        elif node.kind in DEFINITIONS and node.path and node.line is not None:
            by_kind[node.path, node.kind].append(node)
    out: dict[str, list[tuple[int, int, Node]]] = defaultdict(list)
    for (path, kind), nodes in by_kind.items():
        nodes.sort(key=lambda n: (n.line or 0, n.id))
        lines = [n.line or 0 for n in nodes]
        for node in nodes:
            start = node.line or 0
            if kind is NodeKind.SYMBOL:
                end = int(node.get("end_line") or start)
            else:
                later = [n for n in stops.get(path, ()) if n > start]
                following = bisect.bisect_right(lines, start)  # the next node on a later line
                if following < len(lines):
                    later.append(lines[following])
                end = min(later) - 1 if later else END
            out[path].append((start, end, node))
    for found in out.values():
        found.sort(key=lambda s: (s[0], -s[1], s[2].id))
    return dict(out)


def nodes_touched(m: Map, path: str, ranges: Iterable[Sequence[int]]) -> list[Node]:
    """See :meth:`mapper.query.map.Map.nodes_touched`."""
    wanted = [(int(r[0]), int(r[-1])) for r in ranges]
    hits = [
        (start, end, node)
        for start, end, node in m._spans.get(path, ())
        if any(start <= hi and lo <= end for lo, hi in wanted)
    ]
    hits.sort(key=lambda s: (s[1] - s[0], -s[0], s[2].id))
    return [node for _, _, node in hits]
