"""The documents teams actually have: reStructuredText, plain text and PDF, without front matter.

Each becomes a :class:`~mapper.ingest.docs.DocPage` with an empty front matter, so the ingest
asks it "which layer?" and places it by content (embeddings against the layers' descriptions,
below the configured threshold it is listed as a hole, not guessed) and by the code names it
mentions (each mention that resolves to a symbol is an edge).

- reStructuredText: sections at underlined (or over- and underlined) titles; inline literals
  (````name````), ``:role:`name``` references and the calls of code blocks (``::`` literal
  blocks, ``code-block`` directives) are mentions.
- Plain text: sections at Markdown-style ``#`` headings or underlined titles, else one section;
  mentions are identifiers that look like code (``snake_case_with_underscore``, ``CamelCase``,
  ``name()``).
- PDF (read with pypdf): one section per page titled by its first line, mentions as in plain
  text. An encrypted PDF, a PDF pypdf cannot read, and one without extractable text (scanned
  pages) raise IngestError with that reason: the ingest skips it and says why.
"""

from __future__ import annotations

import io
import re
from collections.abc import Callable

from mapper.errors import IngestError
from mapper.ingest.docs import DocPage, slugify
from mapper.ingest.mentions import sample_calls
from mapper.material import DocSection
from mapper.model import Location

_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+:.])\1{2,}\s*$")
_HASH_HEADING = re.compile(r"^#{1,6}\s+(.+?)\s*#*\s*$")
_RST_LITERAL = re.compile(r"``([^`\n]+)``|:[a-z:]+:`([^`\n]+)`")
_RST_CODE = re.compile(r"^\s*\.\. (code-block|code|sourcecode|testcode|doctest)::")
_CODE_NAME = re.compile(r"\b([A-Za-z_][A-Za-z0-9]*_[A-Za-z0-9_]+|[A-Z][a-z0-9]+[A-Z]\w*|\w+\(\))")
_MAX_MENTIONS = 500


def parse_rst_text(text: str, rel_path: str) -> DocPage:
    lines = text.splitlines()
    sections = _sections(lines, rel_path, _rst_title)
    mentions: list[tuple[str, Location]] = []
    samples: list[tuple[str, Location]] = []
    block: int | None = None  # indentation of the directive opening the code block we are in
    for i, line in enumerate(lines):
        indent = len(line) - len(line.lstrip())
        if block is not None and line.strip() and indent <= block:
            block = None
        if block is not None:
            where = Location(rel_path, i + 1)
            samples.extend((name, where) for name in sample_calls(line))
            continue
        if line.rstrip().endswith("::") or _RST_CODE.match(line):
            block = indent
        for match in _RST_LITERAL.finditer(line):
            name = (match.group(1) or match.group(2) or "").strip().lstrip("~.").rstrip("()")
            name = name.split("<")[-1].rstrip(">").strip()  # :ref:`text <target>`
            if name:
                mentions.append((name, Location(rel_path, i + 1)))
    kept = tuple(mentions[:_MAX_MENTIONS])
    return DocPage(rel_path, {}, sections, (), kept, (), tuple(samples[:_MAX_MENTIONS]))


def parse_plain_text(text: str, rel_path: str) -> DocPage:
    lines = text.splitlines()
    sections = _sections(lines, rel_path, _text_title)
    return DocPage(rel_path, {}, sections, (), _code_names(lines, rel_path, 0))


def parse_pdf(data: bytes, rel_path: str) -> DocPage:
    """One section per page; IngestError for encrypted, unreadable or text-less PDFs."""
    from pypdf import PdfReader
    from pypdf.errors import PyPdfError

    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            raise IngestError("encrypted PDF: no text can be read", path=rel_path)
        pages = [page.extract_text() or "" for page in reader.pages]
    except IngestError:
        raise
    except (PyPdfError, ValueError, KeyError, TypeError, OSError) as exc:
        raise IngestError(f"corrupted PDF: {exc}", path=rel_path) from exc
    if not any(p.strip() for p in pages):
        raise IngestError(
            f"no extractable text in {len(pages)} page(s): scanned images?", path=rel_path
        )
    sections: list[DocSection] = []
    mentions: list[tuple[str, Location]] = []
    for number, page_text in enumerate(pages, start=1):
        lines = [line.strip() for line in page_text.splitlines() if line.strip()]
        if not lines:
            continue
        heading = lines[0][:120]
        where = Location(rel_path, number)  # a PDF's "line" is its page number
        anchor = f"page-{number}"
        sections.append(DocSection(rel_path, anchor, heading, "\n".join(lines), where))
        mentions.extend((name, where) for name, _ in _code_names(lines, rel_path, 0))
    return DocPage(rel_path, {}, tuple(sections), (), tuple(mentions[:_MAX_MENTIONS]))


def _rst_title(lines: list[str], i: int) -> int:
    """Lines a title at ``i`` spans (text + underline, or overline + text + underline)."""
    if i + 2 < len(lines) and _UNDERLINE.match(lines[i]) and _UNDERLINE.match(lines[i + 2]):
        return 3 if lines[i + 1].strip() else 0
    if i + 1 < len(lines) and lines[i].strip() and _UNDERLINE.match(lines[i + 1]):
        return 2 if len(lines[i + 1].strip()) >= len(lines[i].strip()) - 1 else 0
    return 0


def _text_title(lines: list[str], i: int) -> int:
    if _HASH_HEADING.match(lines[i]):
        return 1
    return _rst_title(lines, i) if i + 1 < len(lines) and lines[i + 1][:1] in "=-~" else 0


def _sections(
    lines: list[str], path: str, title_at: Callable[[list[str], int], int]
) -> tuple[DocSection, ...]:
    out: list[DocSection] = []
    heading, start = "", 1
    body: list[str] = []

    def flush() -> None:
        text = "\n".join(body).strip()
        if heading or text:
            out.append(DocSection(path, slugify(heading), heading, text, Location(path, start)))

    i = 0
    while i < len(lines):
        span = title_at(lines, i)
        if span:
            flush()
            title_line = lines[i + 1] if span == 3 else lines[i]
            match = _HASH_HEADING.match(title_line)
            heading = (match.group(1) if match else title_line).strip()
            start, body = i + 1, []
            i += span
            continue
        body.append(lines[i])
        i += 1
    flush()
    return tuple(out)


def _code_names(lines: list[str], path: str, offset: int) -> tuple[tuple[str, Location], ...]:
    found: list[tuple[str, Location]] = []
    seen: set[str] = set()
    for i, line in enumerate(lines):
        for match in _CODE_NAME.finditer(line):
            name = match.group(1).removesuffix("()")
            if name not in seen:
                seen.add(name)
                found.append((name, Location(path, offset + i + 1)))
    return tuple(found[:_MAX_MENTIONS])
