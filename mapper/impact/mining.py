"""Mine a git history for signature changes whose commit also updates call sites elsewhere.

A case is one commit with one parent where a public Python function or method of the mapped
layers changed its signature (as ``stackmap diff`` classifies it: parameters, their types,
order or defaults, the return type) and where another file's changed lines name it.
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


def _git(root: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, timeout=300, check=False
    )
    if proc.returncode != 0:
        tail = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RevisionError(f"git {args[0]} failed: {tail[-1] if tail else '?'}")
    return proc.stdout.decode("utf-8", "replace")


def diff_by_file(root: Path, parent: str, commit: str) -> dict[str, str]:
    """path → the changed lines (``+``/``-``, no headers) of each file."""
    text = _git(root, "diff", "-U0", "--no-color", "--no-renames", parent, commit)
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith("diff --git "):
            path = line.split(" b/", 1)[1] if " b/" in line else line
            current = out.setdefault(path, [])
        elif current is not None and line[:1] in "+-" and not line.startswith(("+++", "---")):
            current.append(line[1:])
    return {path: "\n".join(lines) for path, lines in out.items()}


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
            parts = change.name.split(".")
            short = parts[-2] if parts[-1] == "__init__" and len(parts) > 1 else parts[-1]
            name = re.compile(rf"\b{re.escape(short)}\b")
            own = change.location.path
            related = tuple(p for p in existing if p == own or name.search(lines.get(p, "")))
            if not any(p != own and language_for(p) in CODE_LANGUAGES for p in related):
                continue  # no call site in another code file was updated
            messages = tuple(c.message for c in signature if c.name == change.name)
            yield Case(commit, parent, subject, change.name, own, messages, existing, related)
            found += 1
            if found >= limit:
                return
