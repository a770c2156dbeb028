"""Preprocessor conditionals the parser cannot read through, resolved where they break it.

tree-sitter reads ``#if``/``#ifdef`` groups between declarations and statements, but not one
that cuts through an expression, an initializer or an ``if … else`` — ``} else`` closing one
branch with the block after ``#endif`` — where both branches written out are not C.
:func:`parse_resolving_branches` parses a file as written and, where syntax errors lie inside
conditional groups, keeps only the first branch of **those groups** (the ``#if`` side, or the
``#else`` side of an ``#if 0``), blanking their directives and other branches, and parses
again, widening to the enclosing group while that removes errors. Groups elsewhere in the file
stay as written, so nothing the parser could read is dropped. What is dropped becomes spaces,
so every location is the original's, and each new parse is incremental: tree-sitter is told
which lines changed and reuses the rest of the first tree.
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass

import tree_sitter as ts

from mapper.ingest import treesitter
from mapper.model import Language

_DIRECTIVE = re.compile(r"^\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b(.*)$")
ROUNDS = 4  # widen at most this many times


@dataclass(frozen=True, slots=True)
class Group:
    """One conditional group: its ``#if`` line, ``#elif``/``#else`` lines and ``#endif`` line
    (1-based), and the group it sits in."""

    start: int
    branches: tuple[int, ...]
    end: int
    parent: int | None  # index of the enclosing group in the list, None at top level
    dropped_first: bool  # ``#if 0``: the first branch is the one never compiled


def groups(lines: list[str]) -> list[Group]:
    """Every balanced conditional group of the file, outer groups before the ones inside."""
    found: list[Group] = []
    open_: list[tuple[int, list[int], bool, int]] = []  # (start, branches, if0, slot)
    slots: list[Group | None] = []
    continued = False
    for number, raw in enumerate(lines, start=1):
        if continued:
            continued = raw.rstrip().endswith("\\")
            continue
        match = _DIRECTIVE.match(raw)
        if match is None:
            continue
        continued = raw.rstrip().endswith("\\")
        word, rest = match.groups()
        if word in ("if", "ifdef", "ifndef"):
            open_.append((number, [], word == "if" and rest.strip() in ("0", "(0)"), len(slots)))
            slots.append(None)
        elif word in ("elif", "else") and open_:
            open_[-1][1].append(number)
        elif word == "endif" and open_:
            start, branches, if0, slot = open_.pop()
            parent = open_[-1][3] if open_ else None
            slots[slot] = Group(start, tuple(branches), number, parent, if0)
    # unbalanced groups (an #if without #endif) are left out; parents refer to slots
    index = {slot: i for i, slot in enumerate(s for s, g in enumerate(slots) if g is not None)}
    for g in slots:
        if g is not None:
            parent = index.get(g.parent) if g.parent is not None else None
            found.append(Group(g.start, g.branches, g.end, parent, g.dropped_first))
    return found


def dropped(lines: list[str], chosen: list[Group]) -> set[int]:
    """The line numbers (1-based) that reducing each chosen group to its first compiled
    branch blanks: its directives (with their continuation lines) and its other branches."""
    out: set[int] = set()
    for g in chosen:
        cuts = (g.start, *g.branches, g.end)
        kept = 1 if g.dropped_first else 0  # an ``#if 0`` with no ``#else`` keeps nothing
        for i, (a, b) in enumerate(itertools.pairwise(cuts)):
            out.update(n for n in range(a, b) if n == a or i != kept)
        out.add(g.end)
        for n in cuts:  # continuation lines of the directives
            while n <= len(lines) and lines[n - 1].rstrip().endswith("\\"):
                n += 1
                out.add(n)
    return out


def error_spans(root: ts.Node, limit: int = 50) -> list[tuple[int, int]]:
    """(first line, last line) of the syntax errors under ``root`` (1-based)."""
    found: list[tuple[int, int]] = []
    stack = [root]
    while stack and len(found) < limit:
        node = stack.pop()
        if not node.has_error:
            continue
        if node.is_error or node.is_missing:
            found.append((treesitter.line(node), treesitter.end_line(node)))
            continue
        stack.extend(reversed(node.children))
    return found


def _innermost(all_groups: list[Group], spans: list[tuple[int, int]]) -> set[int]:
    chosen: set[int] = set()
    for first, last in spans:
        best = None
        for i, g in enumerate(all_groups):
            overlaps = g.start <= last and first <= g.end
            if overlaps and (best is None or g.start >= all_groups[best].start):
                best = i
        if best is not None:
            chosen.add(best)
    return chosen


def parse_resolving_branches(language: Language, source: bytes) -> ts.Tree:
    """The tree of ``source``, with the conditional groups that break parsing reduced to their
    first branch (see the module docstring); the source as written when that does not help."""
    tree = treesitter.parse(language, source)
    spans = error_spans(tree.root_node)
    if not spans or b"#" not in source:
        return tree
    lines = source.decode("utf-8", errors="replace").split("\n")
    all_groups = groups(lines)
    blank = _Blanker(language, source, tree)
    chosen: set[int] = set()
    for _ in range(ROUNDS):
        wanted = _innermost(all_groups, spans)
        if wanted <= chosen:  # the same groups still break it: try the groups around them
            wanted = {p for i in chosen if (p := all_groups[i].parent) is not None} - chosen
            if not wanted:
                break
        chosen |= wanted
        trial = blank(dropped(lines, [all_groups[i] for i in chosen]))
        trial_spans = error_spans(trial.root_node)
        if len(trial_spans) < len(spans):
            tree, spans = trial, trial_spans
            if not spans:
                return tree
    # groups that only balance together (``extern "C" {`` in one, its ``}`` in another): the
    # first branch of every group
    trial = blank(dropped(lines, all_groups))
    return trial if len(error_spans(trial.root_node)) < len(spans) else tree


class _Blanker:
    """Trees of the source with some lines blanked, each parsed from the tree as written:
    a blanked line keeps its length (spaces for its bytes), so the edit is told to
    tree-sitter, which re-reads the lines around it and reuses the rest of the tree."""

    def __init__(self, language: Language, source: bytes, tree: ts.Tree) -> None:
        self.language, self.tree = language, tree
        self.lines = source.split(b"\n")
        self.starts = list(itertools.accumulate((len(b) + 1 for b in self.lines), initial=0))

    def __call__(self, numbers: set[int]) -> ts.Tree:
        lines = list(self.lines)
        old = self.tree.copy()
        for first, last in _runs(sorted(numbers)):
            for n in range(first, last + 1):
                lines[n - 1] = b" " * len(lines[n - 1])
            start, end = self.starts[first - 1], self.starts[last] - 1
            point = (first - 1, 0), (last - 1, len(lines[last - 1]))
            old.edit(start, end, end, point[0], point[1], point[1])
        return treesitter.parser(self.language).parse(b"\n".join(lines), old)


def _runs(numbers: list[int]) -> list[tuple[int, int]]:
    """Consecutive numbers as (first, last) runs: ``[1, 2, 3, 7]`` → ``[(1, 3), (7, 7)]``."""
    out: list[tuple[int, int]] = []
    for n in numbers:
        if out and out[-1][1] == n - 1:
            out[-1] = (out[-1][0], n)
        else:
            out.append((n, n))
    return out
