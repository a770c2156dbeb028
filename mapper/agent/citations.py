"""Citations: made from map nodes and edge evidence, and checked against the files.

A citation claims that ``path`` holds ``needle`` at ``line``. :func:`validate` reads the cited
file (only that file, only to check the claim) and accepts the citation when the line exists
and the needle appears on it or on the next lines (a Markdown page cited at line 1: anywhere in
its front matter). File reads are cached per path and modification time. Thread-compatible.
"""

from __future__ import annotations

import functools
import re
from pathlib import Path

from mapper.agent.mapview import MapView
from mapper.agent.records import Citation, CitationKind
from mapper.model import Edge, EdgeKind, Node

_WINDOW = 3  # lines after the cited one that may hold the needle (decorators, wrapped defs)
_FRONT_MATTER_MAX = 60


_SEGMENT = re.compile(r"::|\.|/|:|#")


def tail(name: str) -> str:
    """The last segment of a dotted, ``::`` or path-qualified name."""
    return _SEGMENT.split(name)[-1] or name


def _kind_of(path: str) -> CitationKind:
    if path.startswith("contracts/") or path.endswith((".yaml", ".yml", ".proto")):
        return CitationKind.CONTRACT
    if path.endswith((".md", ".rst", ".txt")):
        return CitationKind.DOC
    if path.startswith("tests/") or "/tests/" in path:
        return CitationKind.TEST
    return CitationKind.CODE


def for_node(node: Node) -> Citation | None:
    """Where a node is defined, and the text that place must show; None without a place."""
    if not node.path:
        return None
    line = node.line or 1
    if node.kind == "symbol":
        needle, label = tail(str(node.attrs.get("qualname") or node.name)), node.name
    elif node.kind == "interface":
        needle, label = node.name, f"contract entry {node.name}"
    elif node.kind == "doc":
        needle = node.name
        label = (
            f"doc section {node.path} § {node.name}"
            if node.attrs.get("anchor")
            else (f"doc page {node.path}")
        )
    elif node.kind == "scenario":
        needle, label = node.id.split(":", 1)[1], f"scenario {node.id.split(':', 1)[1]}"
    elif node.kind == "component":
        if not node.path.endswith(".md"):  # inferred from code: no page names it
            return None
        needle, label = node.name, f"component page {node.path}"
    elif node.kind == "test":
        needle, label = tail(node.id), node.id.split(":", 1)[1]
    else:
        return None
    if not needle:
        return None
    return Citation(node.path, line, _kind_of(node.path), str(needle), node.id, label)


def for_edge(view: MapView, edge: Edge) -> Citation | None:
    """The strongest evidence of an edge, claiming the far end's name is written there."""
    ev = edge.citation
    if not ev.path or not ev.line:
        return None
    target = view.node(edge.target)
    if target is None:
        return None
    if target.kind == "interface" and not ev.path.startswith("contracts/"):
        symbol = target.attrs.get("symbol")
        needle = tail(str(symbol)) if symbol else tail(target.name)
    elif (
        target.kind in ("component", "layer")
        and _kind_of(ev.path) is not CitationKind.DOC
        and (_kind_of(ev.path) is not CitationKind.CONTRACT)
    ):
        return None  # a use in code names a symbol, not the component: cite the node instead
    elif target.kind in ("interface", "component"):
        needle = target.name
    elif target.kind == "layer":
        needle = target.id.split(":", 1)[1]
    elif target.kind == "file":  # an import names the module: its stem, or its package
        stem = Path(target.id.split(":", 1)[1])
        needle = stem.parent.name if stem.stem == "__init__" else stem.stem
    else:
        needle = tail(str(target.attrs.get("qualname") or target.name))
    label = f"{edge.source} {edge.kind.value} {edge.target} ({ev.kind.value})"
    if edge.kind is EdgeKind.CALLS and (via := _through(view, target, ev.path, ev.line, needle)):
        needle, label = via, f"{label} through {via}"
    return Citation(ev.path, ev.line, _kind_of(ev.path), needle, edge.source, label)


def _through(view: MapView, target: Node, path: str, line: int, needle: str) -> str | None:
    """A call the code makes through what ``target`` implements (an ioctl number, a dispatch
    slot) names that, not the handler: the implemented name found on the cited lines."""
    lines = read_lines(view.root, path)
    if lines is None or not 1 <= line <= len(lines):
        return None
    text = "\n".join(window(lines, path, line)).lower()
    if needle.lower() in text:
        return None
    for edge in view.neighbours(target.id, {EdgeKind.IMPLEMENTS}, "out"):
        name = tail(edge.target)
        if name.lower() in text:
            return name
    return None


def for_step(scenario: Node, step: dict[str, object]) -> Citation | None:
    line = step.get("line")
    if not scenario.path or not isinstance(line, int):
        return None
    target = str(step.get("target", ""))
    return Citation(
        scenario.path,
        line,
        CitationKind.SCENARIO,
        target.split(":", 1)[-1],
        scenario.id,
        f"{scenario.id.split(':', 1)[1]} step {step.get('order')}",
    )


@functools.lru_cache(maxsize=512)
def _lines(path: str, mtime: float) -> tuple[str, ...]:
    return tuple(Path(path).read_text(encoding="utf-8", errors="replace").splitlines())


def read_lines(root: Path, path: str) -> tuple[str, ...] | None:
    """The lines of a repository file, or None when it is missing or outside the root."""
    base = root.resolve()
    target = (base / path).resolve()
    if base not in target.parents or not target.is_file():
        return None
    return _lines(str(target), target.stat().st_mtime)


def window(lines: tuple[str, ...], path: str, line: int) -> tuple[str, ...]:
    if line == 1 and path.endswith(".md") and lines and lines[0].strip() == "---":
        end = next(
            (i for i in range(1, min(len(lines), _FRONT_MATTER_MAX)) if lines[i].strip() == "---"),
            min(len(lines), _FRONT_MATTER_MAX),
        )
        return lines[: end + 1]
    return lines[line - 1 : line + _WINDOW]


def validate(root: Path, citation: Citation) -> str | None:
    """None when the citation checks out, else why it does not."""
    lines = read_lines(root, citation.path)
    if lines is None:
        return f"{citation.path}: no such file in the repository"
    if not 1 <= citation.line <= len(lines):
        return f"{citation.where}: line out of range (file has {len(lines)} lines)"
    text = "\n".join(window(lines, citation.path, citation.line)).lower()
    if citation.needle.lower() not in text:
        return f"{citation.where}: does not contain {citation.needle!r}"
    return None


def excerpt(root: Path, path: str, line: int, context: int = 2) -> str | None:
    """Lines ``line - context`` .. ``line + context`` of a cited file, numbered."""
    lines = read_lines(root, path)
    if lines is None or not 1 <= line <= len(lines):
        return None
    lo, hi = max(1, line - context), min(len(lines), line + context)
    return "\n".join(f"{n}: {lines[n - 1]}" for n in range(lo, hi + 1))
