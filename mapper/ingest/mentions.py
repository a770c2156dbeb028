"""What a doc names in code: code spans and the calls in its code samples, resolved to symbols.

- :func:`sample_calls`: the dotted names a line of a code sample calls or applies as a
  decorator (``click.command``, ``ctx.invoke``): a code sample is a call site written in prose.
- :class:`MentionNames`: a mention to the symbol it names, beyond exact qualnames: a name a
  package re-exports (``click.echo``), the one symbol whose qualname ends with the written
  dotted name (``Context.invoke``, or ``click.Context.invoke`` through the package), one
  unique code-looking short name (``format_filename``, ``CliRunner``), or ``recv.method``
  where exactly one class defining ``method`` is named like ``recv`` (``ctx.invoke``).
"""

from __future__ import annotations

import re

from mapper.ingest.receivers import named_like
from mapper.ingest.resolve import Resolver
from mapper.model import Symbol

_CALL = re.compile(r"(?<![\w.])@?([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+)\s*\(|(?<![\w.])@([A-Za-z_]\w*)")
_CODE_LOOKING = re.compile(r"^_?[a-z][a-z0-9]*_[a-z0-9_]+$|^[A-Z][a-z0-9]+[A-Z]\w*$")
_LOWER = re.compile(r"^_?[a-z][a-z0-9_]*$")


def sample_calls(line: str) -> list[str]:
    """Dotted names called on ``line`` of a code sample, and decorators applied."""
    return [m.group(1) or m.group(2) for m in _CALL.finditer(line)]


class MentionNames:
    """Resolves mentions against one resolver's Python symbols (indexes built on first use)."""

    def __init__(self, resolver: Resolver) -> None:
        self.resolver = resolver
        self._suffixes: dict[str, str | None] | None = None

    def _index(self) -> dict[str, str | None]:
        if self._suffixes is None:
            found: dict[str, str | None] = {}
            for qualname in self.resolver.py:
                parts = qualname.split(".")
                for cut in range(1, len(parts)):
                    suffix = ".".join(parts[cut:])
                    found[suffix] = None if suffix in found else qualname
            self._suffixes = found
        return self._suffixes

    def resolve(self, name: str) -> Symbol | None:
        """The symbol ``name`` names, or None when it names none or several."""
        found = self.resolver.any_symbol(name)
        if found is not None or "/" in name or ":" in name:
            return found
        py = self.resolver.py
        parts = name.split(".")
        if len(parts) >= 2:
            found = self.resolver.reexported(name)
            if found is not None:
                return found
        index = self._index()
        for cut in range(len(parts) - 1):  # ``pkg.Class.method``, then ``Class.method``
            qualname = index.get(".".join(parts[cut:]))
            if qualname is not None:
                return py[qualname]
        if len(parts) == 1:
            qualname = index.get(name) if _CODE_LOOKING.match(name) else None
            return py[qualname] if qualname is not None else None
        if len(parts) == 2 and _LOWER.match(parts[0]):
            owners = self.resolver.methods.get(parts[1], [])
            like = [m for m, _ in owners if named_like(parts[0], m.qualname.rsplit(".", 2)[-2])]
            if len(like) == 1:
                return like[0]
        return None
