"""What a change that added an op really touched, definition by definition.

Both sides of each changed code or proto file are parsed (taken from git). A definition the
newer side has and the older one lacks, named after the op, is *added*. A definition both
sides have is *extended* when a line the change added inside it (innermost definition first)
spells the op: a table gaining a row, a registry function gaining a call, a test's list
gaining a value. A line inside an added definition belongs to that definition; a line outside
every definition (a module-level call) touches the file only.

*Bookkeeping* is left out: a changed line naming a file the map configuration ignores
whose name spells the op (the saved prediction itself, ``new_op_x.json``) is about that file,
not about the op, and so are the lines changed with it in one run of consecutive lines (a
comment above the entry, its continuation lines; a blank line ends a run). A list of saved
predictions gaining ``"new_op_x.json": ("X", ...)`` records the evaluation, it is no place
the op's change had to reach; the prediction is not asked to foresee its own entry.
"""

from __future__ import annotations

import posixpath
import re
import subprocess
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from mapper.errors import MapperError
from mapper.impact.changes import DiffSpec
from mapper.impact.patch_types import FileChange
from mapper.ingest.code import CODE_LANGUAGES, language_for, parse_file
from mapper.model import Language
from mapper.scenarios import vocab

_WORD = re.compile(r"\w+")


@dataclass(frozen=True, slots=True)
class _Def:
    qualname: str
    start: int
    end: int


def last(name: str) -> str:
    """The last component of a qualified name or node id."""
    return name.removeprefix("symbol:").rpartition(":")[2].rpartition(".")[2]


def spells(text: str, spelt: set[str], bookkeeping: Iterable[str] = ()) -> bool:
    """Whether a word of ``text`` spells the op (a run of its words is a spelling), on a line
    naming none of the ``bookkeeping`` file names."""
    kept = [ln for ln in text.splitlines() if not any(b in ln for b in bookkeeping)]
    return any(vocab.runs(w) & spelt for ln in kept for w in _WORD.findall(ln))


def bookkeeping(root: Path, rev: str, ignored: Callable[[str], bool], spelt: set[str]) -> set[str]:
    """The base names of the files at ``rev`` that the map ignores (``ignored``) and whose
    names spell the op: lines naming them are the evaluation's bookkeeping (see the module
    docstring)."""
    proc = subprocess.run(
        ["git", "-C", str(root), "ls-tree", "-r", "--name-only", rev],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    names = (posixpath.basename(p) for p in proc.stdout.splitlines() if ignored(p))
    return {n for n in names if spells(n.partition(".")[0], spelt)}


def bookkept(numbered: dict[int, str], skip: Iterable[str]) -> set[int]:
    """The numbers of the changed lines ``numbered`` (number → text, one side of a diff) in a
    run of consecutive non-blank lines where a line names one of the ``skip`` files."""
    out: set[int] = set()
    run: list[int] = []
    for n in sorted(numbered):
        if not numbered[n].strip():
            run = []
            continue
        if run and n != run[-1] + 1:
            run = []
        run.append(n)
        if any(name in numbered[n] for name in skip) or (out and run[0] in out):
            out.update(run)
    return out


def kept_text(changed: Iterable[tuple[str, int, str]], skip: Iterable[str]) -> str:
    """The changed lines of one file (``(side, number, text)``, as
    :func:`~mapper.impact.mining.changed_lines` gives them) outside the bookkeeping runs."""
    changed = list(changed)
    skip = list(skip)
    dropped = {
        (side, n)
        for side in "+-"
        for n in bookkept({n: t for s, n, t in changed if s == side}, skip)
    }
    return "\n".join(t for s, n, t in changed if (s, n) not in dropped)


def _show(root: Path, rev: str, path: str) -> bytes | None:
    proc = subprocess.run(
        ["git", "-C", str(root), "show", f"{rev}:{path}"],
        capture_output=True,
        timeout=120,
        check=False,
    )
    return proc.stdout if proc.returncode == 0 else None


def _definitions(tree: Path, path: str, data: bytes | None) -> list[_Def]:
    if data is None:
        return []
    target = tree / path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data)
    try:
        parsed = parse_file(tree, path)
    except MapperError:
        return []
    out = []
    for s in parsed.symbols:
        start = int(str(s.location).rpartition(":")[2] or 0)
        out.append(_Def(s.qualname, start, s.end_line or start))
    return out


def touched(
    root: Path,
    spec: DiffSpec,
    files: Iterable[FileChange],
    spelt: set[str],
    changed: dict[str, list[tuple[str, int, str]]],
    skip: Iterable[str] = (),
) -> tuple[set[str], set[str]]:
    """(added, extended) qualified names of the definitions the change touched for the op
    (``spelt``: its compact spellings), given the range's ``changed`` lines (as
    :func:`~mapper.impact.mining.changed_lines` gives them), lines naming a ``skip`` file
    (:func:`bookkeeping`) left out."""
    added: set[str] = set()
    extended: set[str] = set()
    new_rev = spec.new or "HEAD"
    numbers = {path: {n for side, n, _ in rows if side == "+"} for path, rows in changed.items()}
    skip = list(skip)
    with tempfile.TemporaryDirectory(prefix="stackmap-touched-") as tmp:
        for change in files:
            path = change.path
            if language_for(path) not in (*CODE_LANGUAGES, Language.PROTO):
                continue
            data = _show(root, new_rev, path)
            new = _definitions(Path(tmp) / "b", path, data)
            old = {
                d.qualname for d in _definitions(Path(tmp) / "a", path, _show(root, spec.old, path))
            }
            fresh = {d.qualname for d in new} - old
            added |= {q for q in fresh if vocab.runs(last(q)) & spelt}
            lines = (data or b"").decode("utf-8", "replace").splitlines()
            here = {n: lines[n - 1] for n in numbers.get(path, ()) if n <= len(lines)}
            dropped = bookkept(here, skip)
            for n in sorted(here):
                if n in dropped or not spells(here[n], spelt):
                    continue
                inside = [d for d in new if d.start <= n <= d.end]
                if not inside:
                    continue
                inner = min(inside, key=lambda d: (d.end - d.start, -d.start))
                if inner.qualname not in fresh:
                    extended.add(inner.qualname)
    return added, extended - added
