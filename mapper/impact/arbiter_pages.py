"""Where a page's changed use of a name sits: a code sample, a code span, or prose.

The textual ``call_sites`` truth counts a page when a changed line calls the short name,
applies it as a decorator, or holds it in a code span. :mod:`mapper.impact.arbiter` asks
Jedi about code samples; this module finds them and reads code spans:

- a line inside a code sample (reStructuredText ``::`` literal blocks and code directives,
  Markdown fences tagged Python or untagged) becomes a position in that sample, written out
  as a Python snippet (dedented, line for line) for Jedi;
- a code span (````name````, ``:role:`name```, Markdown backticks) naming the definition —
  its text, less a leading ``~``/``.`` and a trailing ``()``, is a dotted suffix of the
  qualified name (or of its class, for a constructor), or the package and such a suffix — is
  a use; one naming something else
  (``Context.get_parameter_source`` when the definition is ``Context.__init__``) is not;
  a span that is not a dotted name (``@group.command()``) is unknown;
- the same word in prose ("it will never fail (except …") is no use at all.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_RST_CODE = re.compile(r"^\s*\.\. [\w:-]+::")
_FENCE = re.compile(r"^\s*(```|~~~)\s*([\w+-]*)")
_PYTHON = frozenset({"", "python", "py", "pycon", "python3"})
_SPANS = re.compile(r"``([^`\n]+)``|:[\w:.-]+:`([^`\n]+)`|(?<!`)`([^`\n]+)`(?!`)")
_DOTTED = re.compile(r"^[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*$")


@dataclass(frozen=True, slots=True)
class Sample:
    """A code sample of a page: its first line on the page and its dedented text."""

    first: int  # page line (1-based) of the snippet's line 1
    indent: int  # columns removed from every line
    code: str

    def position(self, line: int, column: int) -> tuple[int, int]:
        """The snippet position of a page position inside the sample."""
        return line - self.first + 1, max(column - self.indent, 0)


def samples(text: str, path: str) -> list[Sample]:
    """The code samples of a page, by its kind (``.md``: fences; otherwise reST blocks)."""
    lines = text.splitlines()
    spans = _fences(lines) if path.endswith((".md", ".markdown")) else _rst_blocks(lines)
    out: list[Sample] = []
    for start, end in spans:  # page lines start..end (0-based, end exclusive)
        body = lines[start:end]
        indent = min((len(b) - len(b.lstrip()) for b in body if b.strip()), default=0)
        code = "\n".join(b[indent:] for b in body)
        out.append(Sample(start + 1, indent, code + "\n"))
    return out


def sample_at(found: list[Sample], line: int) -> Sample | None:
    for sample in found:
        if sample.first <= line < sample.first + sample.code.count("\n"):
            return sample
    return None


def span_verdict(text: str, column: int, short: str, qualname: str) -> str | None:
    """``"matched"``, ``"other"`` or ``"unknown"`` for a code span of ``text`` covering
    ``column``; None when the position is in no span (prose)."""
    for match in _SPANS.finditer(text):
        if not match.start() <= column < match.end():
            continue
        raw = next(g for g in match.groups() if g is not None)
        name = raw.split("<")[-1].rstrip(">").strip().lstrip("~.").removesuffix("()")
        if not _DOTTED.match(name) or short not in name.split("."):
            return "unknown"
        return "matched" if _names(name, qualname) else "other"
    return None


def _names(name: str, qualname: str) -> bool:
    """``name`` is a dotted suffix of the definition (or of its class, for a constructor), or
    its package followed by such a suffix (``click.Context.invoke`` re-exports
    ``click.core.Context.invoke``)."""
    targets = [qualname]
    if qualname.endswith(".__init__"):
        targets.append(qualname.removesuffix(".__init__"))
    parts = name.split(".")
    for target in targets:
        want = target.split(".")
        if want[-len(parts) :] == parts:
            return True
        if len(parts) >= 2 and parts[0] == want[0] and want[-(len(parts) - 1) :] == parts[1:]:
            return True
    return False


def _fences(lines: list[str]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    start: int | None = None
    python = False
    for i, line in enumerate(lines):
        fence = _FENCE.match(line)
        if fence is None:
            continue
        if start is None:
            start, python = i + 1, fence.group(2).lower() in _PYTHON
        else:
            if python:
                out.append((start, i))
            start = None
    return out


def _rst_blocks(lines: list[str]) -> list[tuple[int, int]]:
    """Blocks after a line ending in ``::`` or a directive, while indented deeper than it."""
    out: list[tuple[int, int]] = []
    opener: int | None = None  # indentation of the line opening the block
    start = 0
    for i, line in enumerate(lines):
        indent = len(line) - len(line.lstrip())
        if opener is not None and line.strip() and indent <= opener:
            out.append((start, _trim(lines, start, i)))
            opener = None
        if opener is None and (line.rstrip().endswith("::") or _RST_CODE.match(line)):
            opener, start = indent, i + 1
    if opener is not None:
        out.append((start, _trim(lines, start, len(lines))))
    return [(s, e) for s, e in out if e > s]


def _trim(lines: list[str], start: int, end: int) -> int:
    while end > start and not lines[end - 1].strip():
        end -= 1
    return end
