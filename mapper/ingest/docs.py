"""Markdown pages: YAML front matter, heading-delimited sections, scenario steps, code mentions.

Schema of the front matter: ``knowledge_base/README.md``. A page whose front matter is not
valid YAML (or not a mapping) still yields its sections, with an empty front matter and a
warning; a file that cannot be read or is not UTF-8 raises IngestError. Headings inside fenced
code blocks are not headings; backticked spans inside them are not mentions, the calls and
decorators of a Python code block are (:func:`~mapper.ingest.mentions.sample_calls`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mapper.errors import IngestError
from mapper.ingest import yamlines
from mapper.ingest.code import read_text_file
from mapper.ingest.mentions import sample_calls
from mapper.material import DocSection, ScenarioStep
from mapper.model import Location

_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
_FENCE = re.compile(r"^\s*(```|~~~)")
_TICKS = re.compile(r"`([^`\n]+)`")
_PYTHON = frozenset({"python", "py", "pycon", "python3"})
_NAME = re.compile(r"^[A-Za-z_./][\w./:\-]*$")


@dataclass(frozen=True, slots=True)
class DocPage:
    path: str
    front_matter: Mapping[str, Any]
    sections: tuple[DocSection, ...]
    steps: tuple[ScenarioStep, ...]
    mentions: tuple[tuple[str, Location], ...]  # backticked code names with their line
    warnings: tuple[str, ...] = ()
    samples: tuple[tuple[str, Location], ...] = ()  # names code samples call, with their line

    @property
    def title(self) -> str:
        title = self.front_matter.get("title")
        if isinstance(title, str) and title:
            return title
        heading = next((s.heading for s in self.sections if s.heading), None)
        return heading or self.path


def slugify(heading: str) -> str:
    """GitHub-style anchor: lower case, punctuation dropped, spaces to hyphens."""
    slug = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return slug.replace(" ", "-")


def parse_markdown(root: Path, rel_path: str) -> DocPage:
    """Read and split one Markdown page (IngestError when unreadable or not UTF-8)."""
    return parse_markdown_text(read_text_file(root, rel_path).decode("utf-8"), rel_path)


def parse_markdown_text(text: str, rel_path: str) -> DocPage:
    lines = text.splitlines()
    warnings: list[str] = []
    raw_fm: Any = {}
    body_start = 0
    if lines and lines[0].strip() == "---":
        end = next((i for i in range(1, len(lines)) if lines[i].strip() in ("---", "...")), None)
        if end is None:
            warnings.append(f"{rel_path}:1: front matter is not closed by '---'")
        else:
            block = "\n".join(lines[1:end])
            try:
                raw_fm = yamlines.load(block, path=rel_path, error=IngestError, first_line=2)
            except IngestError as exc:
                warnings.append(str(exc))
                raw_fm = {}
            if raw_fm is None:
                raw_fm = {}
            if not isinstance(raw_fm, dict):
                warnings.append(f"{rel_path}:2: front matter is not a mapping")
                raw_fm = {}
            body_start = end + 1
    steps = _steps(raw_fm.get("steps"), rel_path, warnings)
    front_matter = _plain(raw_fm)
    frozen = tuple((k, _freeze(v)) for k, v in front_matter.items())
    sections, mentions, samples = _split(lines, body_start, rel_path, frozen)
    return DocPage(rel_path, front_matter, sections, steps, mentions, tuple(warnings), samples)


_Names = tuple[tuple[str, Location], ...]


def _split(
    lines: list[str], start: int, path: str, fm: tuple[tuple[str, Any], ...]
) -> tuple[tuple[DocSection, ...], _Names, _Names]:
    sections: list[DocSection] = []
    mentions: list[tuple[str, Location]] = []
    samples: list[tuple[str, Location]] = []
    used: dict[str, int] = {}
    heading, anchor, head_line = "", "", start + 1
    body: list[str] = []
    in_fence = python = False

    def flush() -> None:
        content = "\n".join(body).strip()
        if heading or content:
            sections.append(
                DocSection(path, anchor, heading, content, Location(path, head_line), fm)
            )

    for i in range(start, len(lines)):
        line = lines[i]
        if ("```" in line or "~~~" in line) and _FENCE.match(line):  # cheap test first
            in_fence = not in_fence
            python = in_fence and line.strip().lstrip("`~").strip().lower() in _PYTHON
            body.append(line)
            continue
        if in_fence and python and ("(" in line or "@" in line):
            where = Location(path, i + 1)
            samples.extend((name, where) for name in sample_calls(line))
        match = None if in_fence or line[:1] != "#" else _HEADING.match(line)
        if match:
            flush()
            heading = match.group(2).strip()
            base = slugify(heading)
            count = used.get(base, 0)
            used[base] = count + 1
            anchor = base if count == 0 else f"{base}-{count}"
            head_line, body = i + 1, []
        else:
            body.append(line)
        if not in_fence and "`" in line:
            for tick in _TICKS.finditer(line):
                name = tick.group(1).strip().removesuffix("()")
                if _NAME.match(name):
                    mentions.append((name, Location(path, i + 1)))
    flush()
    return tuple(sections), tuple(mentions), tuple(samples)


def _steps(raw: Any, path: str, warnings: list[str]) -> tuple[ScenarioStep, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        warnings.append(f"{path}: front matter 'steps' is not a list")
        return ()
    steps: list[ScenarioStep] = []
    for i, entry in enumerate(raw):
        line = yamlines.line_of(entry)
        if not isinstance(entry, dict):
            warnings.append(f"{path}:{line or 1}: step {i + 1} is not a mapping")
            continue
        kind = (
            "component" if "component" in entry else "interface" if "interface" in entry else None
        )
        if kind is None:
            warnings.append(f"{path}:{line}: step {i + 1} names no component or interface")
            continue
        order = entry.get("order", i + 1)
        steps.append(
            ScenarioStep(
                int(order) if isinstance(order, int) else i + 1,
                f"{kind}:{entry[kind]}",
                str(entry.get("action", "")),
                Location(path, line),
            )
        )
    return tuple(steps)


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)  # dates and other YAML scalars


def _freeze(value: Any) -> Any:
    if isinstance(value, dict):
        return tuple((k, _freeze(v)) for k, v in value.items())
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    return value
