"""Path globs as the map's configuration writes them, matched against repository-relative
POSIX paths: ``*`` and ``?`` stay inside one path segment, ``**`` spans segments (``a/**``
matches everything under ``a``)."""

from __future__ import annotations

import functools
import re


@functools.lru_cache(maxsize=4096)
def glob_regex(pattern: str) -> re.Pattern[str]:
    """Compile a path glob (``*``, ``?``, ``**``) into an anchored regular expression."""
    out: list[str] = []
    i = 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
        elif pattern.startswith("**", i):
            out.append(".*")
            i += 2
        elif pattern[i] == "*":
            out.append("[^/]*")
            i += 1
        elif pattern[i] == "?":
            out.append("[^/]")
            i += 1
        else:
            out.append(re.escape(pattern[i]))
            i += 1
    return re.compile("".join(out) + r"\Z")
