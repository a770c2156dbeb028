"""Patch text (``git diff`` output, with or without context, or a plain unified diff) to the
files it changes and their changed line ranges.

:func:`parse_patch` is pure: it reads only the text it is given. It is the one reader of diff
text — ``impact --diff`` feeds it ``git diff -U0`` output, ``impact --patch`` and the web
Impact page feed it what a person pasted. Pasted text is untrusted: it is bounded in size
(:class:`~mapper.impact.patch_types.PatchLimits`), every file path must stay inside the
repository, and every hunk must hold exactly the lines its header counts; anything else is a
:class:`~mapper.impact.patch_types.PatchError` naming the line of the patch at fault. The
records it yields and its errors are in :mod:`mapper.impact.patch_types`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from mapper.impact.patch_types import (
    FileChange,
    FileStatus,
    MalformedPatchError,
    Patch,
    PatchLimits,
    PatchTooLargeError,
    UnsafePathError,
)

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
_ESCAPES = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


@dataclass(slots=True)
class _Draft:
    """The file being read (mutable while its headers and hunks arrive)."""

    start: int
    status: FileStatus = FileStatus.MODIFIED
    old_path: str | None = None
    new_path: str | None = None
    old: list[tuple[int, int]] = field(default_factory=list)
    new: list[tuple[int, int]] = field(default_factory=list)
    binary: bool = False
    hunks: int = 0


def parse_patch(text: str, limits: PatchLimits | None = PatchLimits()) -> Patch:
    """The files ``text`` changes, with their changed line ranges.

    Accepts ``git diff`` / ``git show`` / ``git format-patch`` output (text before the first
    file header is ignored) and plain unified diffs (``---``/``+++`` headers). Renames and
    copies keep both paths; new, deleted and binary files get their status. An empty line
    inside a hunk reads as a context line whose leading space an editor or mailer stripped.

    Raises PatchTooLargeError over ``limits``, UnsafePathError for a path leaving the
    repository, MalformedPatchError for text that is not a diff or disagrees with itself.

    >>> parse_patch("--- a/x.py\\n+++ b/x.py\\n@@ -3 +3 @@\\n-a\\n+b\\n").files[0].new
    ((3, 3),)
    """
    if limits is not None and len(text.encode("utf-8", "replace")) > limits.max_bytes:
        raise PatchTooLargeError(
            f"the patch is {len(text.encode('utf-8', 'replace'))} bytes; at most "
            f"{limits.max_bytes} are read",
            limit="max_bytes",
            size=len(text.encode("utf-8", "replace")),
        )
    if not text.strip():
        raise MalformedPatchError("the patch is empty")
    # lines end at "\n" (or "\r\n") only: a form feed or another separator str.splitlines()
    # knows is content (a licence text's page break)
    lines = [line.removesuffix("\r") for line in text.split("\n")]
    if lines and lines[-1] == "":
        lines.pop()
    reader = _Reader(lines, limits)
    reader.run()
    if not reader.files:
        raise MalformedPatchError(
            "no file header found: expected `diff --git a/… b/…` or `--- a/…` / `+++ b/…` lines"
        )
    return Patch(tuple(reader.files), reader.prefixed, reader.hunks)


class _Reader:
    """One pass over the lines; ``_file`` collects the current file's headers and ranges."""

    def __init__(self, lines: list[str], limits: PatchLimits | None) -> None:
        self.lines = lines
        self.limits = limits
        self.files: list[FileChange] = []
        self.prefixed = False
        self.hunks = 0
        self._file: _Draft | None = None

    def run(self) -> None:
        i = 0
        while i < len(self.lines):
            raw = self.lines[i]
            if raw.startswith("diff --git "):
                self._start(i, git=raw[len("diff --git ") :])
            elif (
                raw.startswith("--- ")
                and i + 1 < len(self.lines)
                and self.lines[i + 1][:4] == "+++ "
            ):
                if self._file is None or self._file.hunks:
                    self._start(i, git=None)
                self._side("old", raw[4:], i)
                self._side("new", self.lines[i + 1][4:], i + 1)
                i += 1
            elif raw.startswith("@@"):
                i = self._hunk(i)
                continue
            elif self._file is not None:
                self._extended(raw, i)
            i += 1
        self._flush()

    def _start(self, i: int, git: str | None) -> None:
        self._flush()
        if self.limits is not None and len(self.files) >= self.limits.max_files:
            raise PatchTooLargeError(
                f"the patch changes more than {self.limits.max_files} files",
                line=i + 1,
                limit="max_files",
                size=len(self.files) + 1,
            )
        self._file = _Draft(i + 1)
        if git is not None:
            self._file.old_path, self._file.new_path = _git_header_paths(git, i + 1)

    def _side(self, side: str, value: str, i: int) -> None:
        assert self._file is not None
        value = value.split("\t", 1)[0] if not value.startswith('"') else value
        path = _unquote(value.rstrip(), i)
        if path == "/dev/null":
            self._file.status = FileStatus.ADDED if side == "old" else FileStatus.DELETED
        elif side == "old":
            self._file.old_path = self._strip(path, "a/", i)
        else:
            self._file.new_path = self._strip(path, "b/", i)

    def _strip(self, path: str, prefix: str, i: int) -> str:
        if path.startswith(prefix):
            self.prefixed = True
            path = path[len(prefix) :]
        return _safe(path, i + 1)

    def _extended(self, raw: str, i: int) -> None:
        assert self._file is not None
        for key, status, side in (
            ("new file mode ", FileStatus.ADDED, None),
            ("deleted file mode ", FileStatus.DELETED, None),
            ("rename from ", FileStatus.RENAMED, "old"),
            ("rename to ", FileStatus.RENAMED, "new"),
            ("copy from ", FileStatus.COPIED, "old"),
            ("copy to ", FileStatus.COPIED, "new"),
        ):
            if raw.startswith(key):
                self._file.status = status
                path = _safe(_unquote(raw[len(key) :], i), i + 1)
                if side == "old":
                    self._file.old_path = path
                elif side == "new":
                    self._file.new_path = path
                return
        if raw.startswith("Binary files ") or raw == "GIT binary patch":
            self._file.binary = True

    def _hunk(self, i: int) -> int:
        match = _HUNK.match(self.lines[i])
        if self._file is None or match is None:
            what = "outside a file" if match else "with a malformed header"
            raise MalformedPatchError(f"hunk {what}: {self.lines[i][:80]!r}", line=i + 1)
        self.hunks += 1
        if self.limits is not None and self.hunks > self.limits.max_hunks:
            raise PatchTooLargeError(
                f"the patch has more than {self.limits.max_hunks} hunks",
                line=i + 1,
                limit="max_hunks",
                size=self.hunks,
            )
        self._file.hunks += 1
        a, alen = int(match[1]), int(match[2] if match[2] is not None else 1)
        b, blen = int(match[3]), int(match[4] if match[4] is not None else 1)
        old_ln, new_ln = (a if alen else a + 1), (b if blen else b + 1)
        left_old, left_new = alen, blen
        block: list[list[int]] = [[], []]
        old_ranges, new_ranges = self._file.old, self._file.new

        def close() -> None:
            if block[0] or block[1]:
                old_ranges.append(_span(block[0], old_ln))
                new_ranges.append(_span(block[1], new_ln))
                block[0], block[1] = [], []

        j = i + 1
        while left_old or left_new:
            if j >= len(self.lines):
                raise MalformedPatchError(
                    f"hunk ends early: {left_old} old and {left_new} new lines missing",
                    line=i + 1,
                )
            line, j = self.lines[j], j + 1
            tag = line[:1]
            if tag in (" ", "") and left_old and left_new:
                close()
                old_ln, left_old = old_ln + 1, left_old - 1
                new_ln, left_new = new_ln + 1, left_new - 1
            elif tag == "-" and left_old:
                block[0].append(old_ln)
                old_ln, left_old = old_ln + 1, left_old - 1
            elif tag == "+" and left_new:
                block[1].append(new_ln)
                new_ln, left_new = new_ln + 1, left_new - 1
            elif tag == "\\":
                continue  # "\ No newline at end of file"
            else:
                raise MalformedPatchError(
                    f"hunk line disagrees with its header ({left_old} old and {left_new} new "
                    f"lines still expected): {line[:80]!r}",
                    line=j,
                )
        close()
        while j < len(self.lines) and self.lines[j].startswith("\\"):
            j += 1
        return j

    def _flush(self) -> None:
        file, self._file = self._file, None
        if file is None:
            return
        status = file.status
        path = file.old_path if status is FileStatus.DELETED else (file.new_path or file.old_path)
        if path is None:
            raise MalformedPatchError("a file header without a path", line=file.start)
        if status is FileStatus.MODIFIED and file.old_path and file.new_path != file.old_path:
            status = FileStatus.RENAMED
        old_path = file.old_path if file.old_path != path else None
        self.files.append(
            FileChange(path, status.value, tuple(file.old), tuple(file.new), old_path, file.binary)
        )


def _span(lines: list[int], after: int) -> tuple[int, int]:
    """The inclusive range of ``lines``, or the line before ``after`` when none changed."""
    if lines:
        return lines[0], lines[-1]
    at = max(after - 1, 1)
    return at, at


def _git_header_paths(rest: str, line: int) -> tuple[str | None, str | None]:
    """``a/X b/X`` of a ``diff --git`` line when both halves are the same path (the only
    unambiguous case with spaces); otherwise None — the ``---``/``+++`` or rename lines say."""
    if rest.startswith('"'):
        return None, None
    half = (len(rest) - 1) // 2
    old, new = rest[:half], rest[half + 1 :]
    if old.startswith("a/") and new.startswith("b/") and old[2:] == new[2:]:
        return _safe(old[2:], line), _safe(new[2:], line)
    return None, None


def _unquote(value: str, i: int) -> str:
    """A path as git writes it: C-quoted (``"a/t\\tb"``) when it holds special characters."""
    if not value.startswith('"'):
        return value
    if len(value) < 2 or not value.endswith('"'):
        raise MalformedPatchError(f"unterminated quoted path {value[:80]!r}", line=i + 1)
    body, out, k = value[1:-1], bytearray(), 0
    while k < len(body):
        ch = body[k]
        if ch != "\\":
            out += ch.encode("utf-8")
            k += 1
        elif body[k + 1 : k + 4].isdigit() and len(body[k + 1 : k + 4]) == 3:
            out.append(int(body[k + 1 : k + 4], 8) & 0xFF)
            k += 4
        else:
            nxt = body[k + 1 : k + 2]
            out += _ESCAPES.get(nxt, nxt).encode("utf-8")
            k += 2
    return out.decode("utf-8", "replace")


def _safe(path: str, line: int | None) -> str:
    parts = path.split("/")
    if not path or path.startswith("/") or ".." in parts or "\0" in path:
        raise UnsafePathError(
            f"path {path[:120]!r} leaves the repository; paths must be relative, without '..'",
            line=line,
        )
    return path
