"""What reading a patch yields, and how it fails: the records of :mod:`mapper.impact.patch`.

A :class:`Patch` is its files in order, each a :class:`FileChange` with its changed line ranges
on both sides; :class:`PatchLimits` bounds untrusted patch text. Every refusal is a
:class:`PatchError` (exit status 2) naming the line of the patch at fault.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from mapper.errors import MapperError


class PatchError(MapperError):
    """The patch text cannot be read (exit status 2); ``line`` is the line of the patch."""

    def __str__(self) -> str:
        return f"patch line {self.line}: {self.message}" if self.line else self.message


class MalformedPatchError(PatchError):
    """Not a diff, a hunk whose lines disagree with its header, or a header out of place."""


class UnsafePathError(PatchError):
    """A file path that is absolute or climbs out of the repository (``..``)."""


class PatchTooLargeError(PatchError):
    """The patch exceeds a :class:`PatchLimits` bound; ``limit`` and ``size`` say which."""


class FileStatus(StrEnum):
    ADDED = "added"
    DELETED = "deleted"
    MODIFIED = "modified"
    RENAMED = "renamed"
    COPIED = "copied"


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file of a diff: its line ranges on the older and the newer side (inclusive).

    ``path`` is the newer side's path (the older one for a deleted file); ``old_path`` the
    older side's when it differs (renames, copies). A range on a side that lost or gained no
    line is the line the change sits after (at least 1). A binary file has no ranges.
    """

    path: str
    status: str  # a FileStatus value
    old: tuple[tuple[int, int], ...]
    new: tuple[tuple[int, int], ...]
    old_path: str | None = None
    binary: bool = False


@dataclass(frozen=True, slots=True)
class PatchLimits:
    """Bounds on untrusted patch text. ``None`` (for text git itself produced) means none."""

    max_bytes: int = 1_000_000
    max_files: int = 1_000
    max_hunks: int = 20_000


@dataclass(frozen=True, slots=True)
class Patch:
    """A parsed patch: its files in order, and whether paths carried ``a/`` / ``b/``."""

    files: tuple[FileChange, ...]
    prefixed: bool = True
    hunks: int = 0
