"""Plain, JSON-ready records of the map for the web UI: nodes, edges and cited code excerpts.

Pure functions of their arguments, used by :mod:`web.data` (the pages and the API reach them
only through :class:`web.data.MapData`): they hold no map state and never write.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mapper.model import Edge, Node

Record = dict[str, Any]

EXCERPT_CONTEXT = 4  # lines either side of a cited line


def node_dict(node: Node) -> Record:
    """A node as the UI shows it: its attributes with kind, name, layer, path and line."""
    return {**node.attrs, "kind": node.kind.value, "name": node.name, "layer": node.layer,
            "path": node.path, "line": node.line}  # fmt: skip


def edge_dict(edge: Edge) -> Record:
    """An edge as the UI shows it: its ends, its kind and every piece of evidence behind it
    (strongest first)."""
    return {
        "source": edge.source,
        "target": edge.target,
        "kind": edge.kind.value,
        "evidence": [
            {"kind": e.kind.value, "path": e.path, "line": e.line, "confidence": e.confidence}
            for e in edge.evidence
        ],
    }


def file_excerpt(
    root: Path, path: str | None, line: int | None, text: str | None = None
) -> Record | None:
    """Lines around ``path:line`` of ``text`` (the map's copy of the file), or of the file
    inside ``root`` (resolved) where the map holds none; None where neither is there.

    Callers pass paths the map or the agent recorded (never a path taken from a request);
    a path that resolves outside the root (``..``, a symlink), a missing file or an unreadable
    one all give None.
    """
    if not path or line is None:
        return None
    if text is None:
        full = (root / path).resolve()
        if not full.is_relative_to(root) or not full.is_file():
            return None
        try:
            text = full.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
    lines = text.splitlines()
    start = max(1, line - EXCERPT_CONTEXT)
    end = min(len(lines), line + EXCERPT_CONTEXT)
    return {
        "path": path,
        "line": line,
        "start": start,
        "lines": [{"n": n, "text": lines[n - 1], "hit": n == line} for n in range(start, end + 1)],
    }
