"""Mine a git history for signature changes whose commit also updates call sites elsewhere.

A case is one commit with one parent where a public Python function or method of the mapped
layers changed its signature (as ``stackmap diff`` classifies it: parameters, their types,
order or defaults, the return type) and where the commit updates a call site of it in another
code file.

Three sets of files per case, each among the files the commit changed that exist at the parent:

- ``changed``: all of them;
- ``related``: those whose changed lines name the definition's short name as a word (with its
  own file): ``t.Tuple`` in an annotation, ``runner.invoke`` or the word "option" in prose
  count for ``Tuple.__init__``, ``Context.invoke`` and ``option`` alike;
- ``call_sites``: those that used the definition at the parent and whose changed lines use it
  (with its own file): the short name called (``name(``), applied as a decorator
  (``@…name``) or, on a page, written in a code span — at the parent and in the change. A
  call the commit adds to a file that never used the name so is new code, not an updated call
  site, and is not counted.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from mapper.check.errors import RevisionError
from mapper.config import StackmapConfig
from mapper.impact.changes import DiffSpec, changed_files, classify
from mapper.ingest.code import CODE_LANGUAGES, language_for

_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


@dataclass(frozen=True, slots=True)
class Case:
    commit: str
    parent: str
    subject: str
    qualname: str  # the changed definition (at the parent)
    path: str  # its file
    messages: tuple[str, ...]
    changed: tuple[str, ...]  # files the commit changed that exist at the parent
    related: tuple[str, ...]  # those whose changed lines name the definition (with its own)
    call_sites: tuple[str, ...] = ()  # those updating a use it had at the parent (with its own)


def _git(root: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, timeout=300, check=False
    )
    if proc.returncode != 0:
        tail = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RevisionError(f"git {args[0]} failed: {tail[-1] if tail else '?'}")
    return proc.stdout.decode("utf-8", "replace")


def diff_text(root: Path, parent: str, commit: str) -> str:
    """``git diff -U0`` of the commit against its parent, without renames."""
    return _git(root, "diff", "-U0", "--no-color", "--no-renames", parent, commit)


def changed_lines(diff: str) -> dict[str, list[tuple[str, int, str]]]:
    """path → its changed lines in diff order, from ``git diff -U0`` output: (``+`` or ``-``,
    the line's number in the commit for ``+`` and in the parent for ``-``, its text)."""
    out: dict[str, list[tuple[str, int, str]]] = {}
    current: list[tuple[str, int, str]] | None = None
    old = new = 0
    for line in diff.splitlines():
        if line.startswith("diff --git "):
            path = line.split(" b/", 1)[1] if " b/" in line else line
            current = out.setdefault(path, [])
        elif current is None or line.startswith(("+++", "---")):
            continue
        elif match := _HUNK.match(line):
            old, new = int(match.group(1)), int(match.group(2))
        elif line.startswith("+"):
            current.append(("+", new, line[1:]))
            new += 1
        elif line.startswith("-"):
            current.append(("-", old, line[1:]))
            old += 1
    return out


def diff_by_file(root: Path, parent: str, commit: str) -> dict[str, str]:
    """path → the changed lines (``+``/``-``, no headers) of each file."""
    changed = changed_lines(diff_text(root, parent, commit))
    return {path: "\n".join(text for _, _, text in lines) for path, lines in changed.items()}


def short_name(qualname: str) -> str:
    """The name call sites write: a constructor is called by its class's name."""
    parts = qualname.split(".")
    return parts[-2] if parts[-1] == "__init__" and len(parts) > 1 else parts[-1]


def use_pattern(short: str, *, page: bool) -> re.Pattern[str]:
    """A use of ``short``: called, applied as a decorator, or on a page (``page``) inside a
    code span."""
    name = re.escape(short)
    span = rf"|`[^`\n]*\b{name}\b[^`\n]*`" if page else ""
    return re.compile(rf"\b{name}\s*\(|@[\w.]*\b{name}\b{span}")


def _uses(path: str, lines: str, short: str) -> bool:
    code = language_for(path) in CODE_LANGUAGES
    return bool(use_pattern(short, page=not code).search(lines))


def users_at(root: Path, rev: str, short: str) -> set[str]:
    """Files of ``rev`` naming ``short`` as a word (``git grep -w``)."""
    proc = subprocess.run(
        ["git", "-C", str(root), "grep", "-l", "-w", "-F", short, rev, "--"],
        capture_output=True,
        timeout=120,
        check=False,
    )
    prefix = f"{rev}:"
    return {p.removeprefix(prefix) for p in proc.stdout.decode().splitlines() if p}


def mine(root: Path, config: StackmapConfig, limit: int, rev: str = "HEAD") -> Iterator[Case]:
    """Up to ``limit`` cases, newest first, from the history of ``rev``."""
    log = _git(root, "log", "--no-merges", "--format=%H %P%x09%s", rev)
    found = 0
    for entry in log.splitlines():
        head, _, subject = entry.partition("\t")
        ids = head.split()
        if len(ids) != 2:
            continue  # the root commit, or a merge
        commit, parent = ids
        spec = DiffSpec(parent, commit)
        files = changed_files(root, spec)
        py = [f for f in files if f.path.endswith(".py") and config.layer_of(f.path)]
        if not py or len(files) < 2:
            continue
        signature = [
            c
            for c in classify(root, config, spec, py)
            if c.kind == "python" and not c.message.endswith((" added", " removed"))
        ]
        if not signature:
            continue
        lines = diff_by_file(root, parent, commit)
        existing = tuple(sorted(f.path for f in files if f.status != "added"))
        seen: set[str] = set()
        for change in signature:
            if change.name in seen:
                continue
            seen.add(change.name)
            short = short_name(change.name)
            name = re.compile(rf"\b{re.escape(short)}\b")
            own = change.location.path
            related = tuple(p for p in existing if p == own or name.search(lines.get(p, "")))
            used = [p for p in related if p != own and _uses(p, lines.get(p, ""), short)]
            users = {p for p in used if _uses(p, _git(root, "show", f"{parent}:{p}"), short)}
            calls = tuple(p for p in related if p == own or p in users)
            if not any(p != own and language_for(p) in CODE_LANGUAGES for p in calls):
                continue  # no call site in another code file was updated
            messages = tuple(c.message for c in signature if c.name == change.name)
            yield Case(
                commit, parent, subject, change.name, own, messages, existing, related, calls
            )
            found += 1
            if found >= limit:
                return
