"""A second opinion on call sites for ``stackmap eval impact``: Jedi's static analysis.

The ``call_sites`` truth (:mod:`mapper.impact.mining`) is textual: a changed line calling
``invoke(`` counts for ``Command.invoke`` although its receiver is a ``CliRunner``, and
``f.close()`` counts for ``Context.close``. The ``resolved`` truth asks a resolver that is not
the map's — Jedi, an independent static analyser of Python — where each changed call of the
short name in a code file goes, at the revision the line belongs to (added lines in the
commit's tree, removed lines in the parent's):

- a call Jedi resolves to the changed definition, or to the same method of a class in its
  hierarchy (a call through a base may dispatch to the override), or a constructor call to
  the class or a subclass: the file calls the definition;
- a call Jedi resolves to another definition: it does not;
- a call Jedi cannot resolve (an untyped parameter, a dynamic attribute): unknown.

A code file leaves the truth only when Jedi resolved every changed call of the name in it,
and none to the definition: an independent resolver has to attribute the lines elsewhere,
so the truth never gains a file and loses only what was demonstrably another definition.
On a page (:mod:`mapper.impact.arbiter_pages`) a use in a code sample is asked of Jedi the
same way, a code span is judged by the name it spells, and the word in prose is no use. Jedi
reads the files; it executes nothing of the project's (compiled extensions are not loaded).
"""

from __future__ import annotations

import io
import re
import tokenize
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mapper.errors import ConfigError
from mapper.impact.arbiter_pages import sample_at, samples, span_verdict
from mapper.impact.mapview import MapView
from mapper.impact.mining import changed_lines, short_name
from mapper.model import EdgeKind
from mapper.query import Direction


@dataclass(frozen=True, slots=True)
class Verdict:
    """Where the changed calls of one file went: definitions Jedi named, calls it could not."""

    calls: int
    matched: tuple[str, ...]  # resolved to the changed definition or its hierarchy
    other: tuple[str, ...]  # resolved elsewhere
    unknown: int

    @property
    def elsewhere(self) -> bool:
        """No use of the definition: every use resolved to another one, or none was a use at
        all (the word in a comment, a string, prose)."""
        return not self.matched and self.unknown == 0


def hunks(diff: str) -> dict[str, tuple[list[tuple[int, str]], list[tuple[int, str]]]]:
    """path → (added lines with their line in the commit, removed lines with their line in the
    parent), from ``git diff -U0`` output."""
    return {
        path: (
            [(n, text) for sign, n, text in lines if sign == "+"],
            [(n, text) for sign, n, text in lines if sign == "-"],
        )
        for path, lines in changed_lines(diff).items()
    }


class Arbiter:
    """Jedi over two trees of one repository: the parent's and the commit's.

    ``roots`` are the Python source roots relative to a tree (``src`` for a src layout).
    Raises ConfigError when Jedi is not installed. Synchronous; Jedi caches parsed modules, so
    one Arbiter per tree pair.
    """

    def __init__(self, parent: Path, commit: Path, roots: Iterable[str] = ()) -> None:
        try:
            import jedi
        except ImportError as exc:  # pragma: no cover - jedi is a dependency
            raise ConfigError("eval impact needs jedi for the resolved truth") from exc
        self._jedi = jedi
        roots = tuple(roots)
        self._trees = {"parent": parent, "commit": commit}
        self._projects = {
            side: jedi.Project(
                tree,
                added_sys_path=[str(tree / r) for r in roots],
                load_unsafe_extensions=False,
            )
            for side, tree in self._trees.items()
        }

    def judge(
        self,
        path: str,
        qualname: str,
        hierarchy: frozenset[str],
        added: list[tuple[int, str]],
        removed: list[tuple[int, str]],
    ) -> Verdict:
        """Resolve every changed use of ``qualname``'s short name in ``path`` (a code file or
        a page).

        ``hierarchy`` holds the qualified names of the classes whose same-named method a call
        may dispatch to (the changed method's class, its bases and subclasses), empty for a
        function. A method is reached through an attribute: a bare-name call Jedi cannot
        resolve is not one of it.
        """
        short = short_name(qualname)
        accepted = _accepted(qualname, hierarchy)
        method = bool(hierarchy) and not qualname.endswith(".__init__")
        counts = {"calls": 0, "unknown": 0}
        matched: set[str] = set()
        other: set[str] = set()
        for side, lines in (("commit", added), ("parent", removed)):
            if not any(short in text for _, text in lines):
                continue
            file = self._trees[side] / path
            text = file.read_text(encoding="utf-8", errors="replace")
            for code, line, column, at in self._uses(path, text, short, qualname, lines):
                counts["calls"] += 1
                if at is not None:  # a code span, judged by the name it spells
                    {"matched": matched, "other": other}.get(at, set()).add(f"span:{at}")
                    counts["unknown"] += at == "unknown"
                    continue
                # a Script per position: once a Script has inferred a pytest fixture parameter
                # it answers later positions with nothing (seen with Jedi 0.20.1); parso's
                # module cache keeps the parse shared
                script = self._jedi.Script(code, path=file, project=self._projects[side])
                names = {d.full_name for d in _goto(script, line, column) if d.full_name}
                if names & accepted:
                    matched |= names & accepted
                elif names:
                    other |= names
                elif method and not _attribute(code, line, column):
                    other.add("bare-name call")
                else:
                    counts["unknown"] += 1
        return Verdict(
            counts["calls"], tuple(sorted(matched)), tuple(sorted(other)), counts["unknown"]
        )

    def _uses(
        self, path: str, text: str, short: str, qualname: str, lines: list[tuple[int, str]]
    ) -> list[tuple[str, int, int, str | None]]:
        """(code, line, column, span verdict) of each use on the changed ``lines``: a
        position in ``code`` for Jedi (the file, or a page's sample), or a span's verdict."""
        out: list[tuple[str, int, int, str | None]] = []
        if path.endswith(".py"):
            names = _name_tokens(text)
            for n, line_text in lines:
                for m in _call(short).finditer(line_text):
                    column = m.start() + m.group(0).rfind(short)
                    if names is None or (n, column) in names:  # not in a comment or string
                        out.append((text, n, column, None))
            return out
        found = samples(text, path)
        for n, line_text in lines:
            sample = sample_at(found, n)
            if sample is not None:  # a code sample: its calls, for Jedi
                code, shift = _with_import(sample.code, qualname.split(".")[0])
                for m in _call(short).finditer(line_text):
                    column = m.start() + m.group(0).rfind(short)
                    line, col = sample.position(n, column)
                    out.append((code, line + shift, col, None))
                continue
            for m in re.finditer(rf"\b{re.escape(short)}\b", line_text):
                verdict = span_verdict(line_text, m.start(), short, qualname)
                if verdict is not None:
                    out.append(("", n, m.start(), verdict))
        return out


def _call(short: str) -> re.Pattern[str]:
    name = re.escape(short)
    return re.compile(rf"\b{name}\s*\(|@[\w.]*\b{name}\b")


def _with_import(code: str, package: str) -> tuple[str, int]:
    """A page's sample with ``import package`` put first when it uses the package without
    importing it (documentation leaves out ``import click``), and the lines that shifts."""
    name = re.escape(package)
    if re.search(rf"^\s*(?:import|from)\s+{name}\b", code, re.M) or not re.search(
        rf"\b{name}\.", code
    ):
        return code, 0
    return f"import {package}\n{code}", 1


def _attribute(code: str, line: int, column: int) -> bool:
    """Whether the name at (line, column) of ``code`` follows a dot (``x.name``)."""
    lines = code.splitlines()
    before = lines[line - 1][:column].rstrip() if 0 < line <= len(lines) else ""
    return before.endswith(".")


def _name_tokens(text: str) -> set[tuple[int, int]] | None:
    """Positions of the NAME tokens of a Python file; None when it does not tokenize."""
    try:
        tokens = tokenize.generate_tokens(io.StringIO(text).readline)
        return {t.start for t in tokens if t.type == tokenize.NAME}
    except (tokenize.TokenError, SyntaxError):
        return None


def _goto(script: Any, line: int, column: int) -> list[Any]:
    try:
        return list(script.goto(line, column, follow_imports=True))
    except (ValueError, RecursionError):  # a position past a line's end; Jedi's deep inference
        return []


def _accepted(qualname: str, hierarchy: frozenset[str]) -> frozenset[str]:
    """Qualified names a call of the changed definition may resolve to."""
    parts = qualname.split(".")
    if len(parts) < 2 or not hierarchy:
        return frozenset({qualname})
    member = parts[-1]
    names = {f"{cls}.{member}" for cls in hierarchy} | {qualname}
    if member == "__init__":  # Cls(...) resolves to the class
        names |= set(hierarchy)
    return frozenset(names)


def hierarchy_of(view: MapView, qualname: str) -> frozenset[str]:
    """The classes a call of method ``qualname`` may dispatch to: its class with the bases and
    subclasses on the map (a constructor: the class and its subclasses); empty for a function."""
    owner = view.node(f"symbol:{qualname.rpartition('.')[0]}")
    if owner is None or owner.get("symbol_kind") != "class":
        return frozenset()
    directions: tuple[Direction, ...] = ("in",) if qualname.endswith(".__init__") else ("in", "out")
    seen = {owner.id}
    for direction in directions:
        todo = [owner.id]
        while todo:
            for edge in view.neighbours(todo.pop(), {EdgeKind.INHERITS}, direction):
                end = edge.source if direction == "in" else edge.target
                if end.startswith("symbol:") and end not in seen:
                    seen.add(end)
                    todo.append(end)
    return frozenset(s.removeprefix("symbol:") for s in seen)


def resolved(
    arbiter: Arbiter,
    view: MapView,
    qualname: str,
    own: str,
    call_sites: Iterable[str],
    changes: dict[str, tuple[list[tuple[int, str]], list[tuple[int, str]]]],
) -> tuple[set[str], dict[str, Verdict]]:
    """The ``call_sites`` files less those whose changed uses resolve entirely to other
    definitions (the definition's own file always stays), with the verdict on each judged."""
    hierarchy = hierarchy_of(view, qualname)
    keep: set[str] = set()
    verdicts: dict[str, Verdict] = {}
    for path in call_sites:
        if path == own or path not in changes:
            keep.add(path)
            continue
        verdict = arbiter.judge(path, qualname, hierarchy, *changes[path])
        verdicts[path] = verdict
        if not verdict.elsewhere:
            keep.add(path)
    return keep, verdicts
