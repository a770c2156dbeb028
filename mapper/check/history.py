"""Which side of a drift changed last, from git history: map stale or code wrong.

Policy (seed 003 §6.1; per-rule policies in ``knowledge_base/reference/check-rules.md``):
for a rule with :attr:`Policy.HISTORY`, the newest commit touching the code span is compared
with the newest commit touching the map span (``git blame`` of the spans; ``git log`` of the
file when the span is gone, e.g. a deleted symbol). Commits are ordered by their position in
``git rev-list --topo-order HEAD``, so the order is exact even for commits made in the same
second. When the spans tie (one commit wrote both, or a deletion left no line behind to blame),
the newest commits touching the two files decide. The code changed last → the code moved
on and the map was not updated: **map stale**.
The map changed last → the code does not follow the map: **code wrong**. Outside git, on
uncommitted lines, or when one commit changed both sides: **unknown**.
"""

from __future__ import annotations

import subprocess
from functools import cached_property
from pathlib import Path

from mapper.check.finding import Classification, Finding, Policy
from mapper.model import Location

_ZERO = "0" * 40
#: Rank of a span with uncommitted lines.
DIRTY = -1


class GitHistory:
    """Read-only access to the history of the repository holding ``root`` (lazy, cached)."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        self._cache: dict[tuple[str, int | None, int | None], int | None] = {}

    def _git(self, *args: str) -> str | None:
        try:
            proc = subprocess.run(
                ["git", "-C", str(self.root), *args],
                capture_output=True,
                text=True,
                timeout=60,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired):
            return None
        return proc.stdout if proc.returncode == 0 else None

    @cached_property
    def available(self) -> bool:
        out = self._git("rev-parse", "--is-inside-work-tree")
        return out is not None and out.strip() == "true" and bool(self._ranks)

    @cached_property
    def _ranks(self) -> dict[str, int]:
        out = self._git("rev-list", "--topo-order", "HEAD")
        return {sha: i for i, sha in enumerate((out or "").split())}

    @cached_property
    def _dirty(self) -> frozenset[str]:
        out = self._git("status", "--porcelain", "-z", "--untracked-files=all", "--", ".")
        prefix = (self._git("rev-parse", "--show-prefix") or "").strip()
        paths = set()
        entries = iter((out or "").split("\0"))
        for entry in entries:
            if len(entry) <= 3:
                continue
            if entry[0] in "RC":
                next(entries, None)  # a rename/copy is followed by its source path
            path = entry[3:]
            paths.add(path[len(prefix) :] if path.startswith(prefix) else path)
        return frozenset(paths)

    def rank(self, path: str, start: int | None = None, end: int | None = None) -> int | None:
        """Rank of the newest commit touching the span (0 = HEAD, larger = older);
        :data:`DIRTY` when it holds uncommitted changes; None when git knows nothing of it."""
        key = (path, start, end)
        if key not in self._cache:
            self._cache[key] = self._compute(path, start, end)
        return self._cache[key]

    def _compute(self, path: str, start: int | None, end: int | None) -> int | None:
        file = self.root / path
        if start is not None and file.is_file():
            n_lines = max(1, len(file.read_bytes().splitlines()))
            lo = min(start, n_lines)
            hi = min(max(end or start, lo), n_lines)
            out = self._git("blame", "--porcelain", "-L", f"{lo},{hi}", "--", path)
            if out is not None:
                shas = {ln.split()[0] for ln in out.splitlines() if _is_header(ln)}
                if _ZERO in shas:
                    return DIRTY
                ranks = [self._ranks[s] for s in shas if s in self._ranks]
                return min(ranks) if ranks else None
        if path in self._dirty or any(p.startswith(path.rstrip("/") + "/") for p in self._dirty):
            return DIRTY
        out = self._git("log", "-1", "--format=%H", "--", path)
        sha = (out or "").strip()
        return self._ranks.get(sha)

    def classify(self, finding: Finding, policy: Policy) -> Classification:
        if policy is Policy.CODE_WRONG:
            return Classification.CODE_WRONG
        if policy is Policy.MAP_STALE:
            return Classification.MAP_STALE
        if not self.available or finding.code is None or finding.map_loc is None:
            return Classification.UNKNOWN
        code = self._side(finding.code, finding.code_end)
        mapped = self._side(finding.map_loc, finding.map_end)
        if code == mapped and code is not None and code != DIRTY:
            # one commit wrote both spans (or a deletion left no line to blame): the files decide
            code = self.rank(finding.code.path)
            mapped = self.rank(finding.map_loc.path)
        if code is None or mapped is None or DIRTY in (code, mapped) or code == mapped:
            return Classification.UNKNOWN
        return Classification.MAP_STALE if code < mapped else Classification.CODE_WRONG

    def _side(self, loc: Location, end: int | None) -> int | None:
        return self.rank(loc.path, loc.line, end)


def _is_header(line: str) -> bool:
    head = line.split(" ", 1)[0]
    return len(head) == 40 and all(c in "0123456789abcdef" for c in head)
