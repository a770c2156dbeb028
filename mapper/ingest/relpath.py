"""Repository-relative POSIX paths as plain strings (no PurePosixPath objects on hot paths)."""

from __future__ import annotations


def name(path: str) -> str:  # PurePosixPath(path).name, without the object
    return path.rstrip("/").rpartition("/")[2]


def normalise(path: str) -> str | None:
    """``a/b/../c.h`` → ``a/c.h``; None when it climbs above the repository root."""
    parts: list[str] = []
    for part in path.split("/"):
        if part in ("", "."):
            continue
        if part == "..":
            if not parts:
                return None
            parts.pop()
        else:
            parts.append(part)
    return "/".join(parts)


def shared(a: str, b: str) -> int:
    """How many leading folders two paths share."""
    count = 0
    for x, y in zip(a.split("/")[:-1], b.split("/")[:-1], strict=False):
        if x != y:
            break
        count += 1
    return count


def parent(path: str) -> str:
    """``str(PurePosixPath(path).parent)`` for a normalised relative path."""
    return path.rstrip("/").rpartition("/")[0] or "."
