"""Parse scanned files into records, turning per-file failures into skips.

A large batch (a full ingest) is parsed on two cores by :mod:`mapper.ingest.parallel`: one
forked child takes about half the code files, with the results of a sequential run.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from mapper.config import StackmapConfig
from mapper.errors import ContractError, IngestError
from mapper.ingest import parallel
from mapper.ingest.cmacros import macro_set
from mapper.ingest.code import parse_source, python_module, sniff_language
from mapper.ingest.contracts import parse_contract
from mapper.ingest.descriptors import parse_descriptor
from mapper.ingest.docs import DocPage, parse_markdown_text
from mapper.ingest.docs_plain import parse_pdf, parse_plain_text, parse_rst_text
from mapper.ingest.proto import parse_proto
from mapper.ingest.scan import Category, SourceFile
from mapper.model import Language


def parse_one(config: StackmapConfig, entry: SourceFile) -> tuple[Any, str | None]:
    """(record, None) or (None, reason the file was skipped). Never raises for bad input."""
    try:
        if entry.category is Category.CONTRACT:
            layers = [layer.id for layer in config.layers]
            return parse_contract(entry.data.decode("utf-8"), entry.path, layers), None
        if entry.category is Category.DOC:
            return parse_document(entry), None
        if entry.category is Category.PROTO:
            return parse_proto(config.root, entry.path), None
        language = sniff_language(entry.path, entry.data) or entry.language
        if language is Language.JSON:
            return parse_descriptor(entry.path, entry.data), None
        # test symbols are not map nodes: their signatures and docstrings are never shown
        detail = entry.category is not Category.TEST
        module = (
            python_module(entry.path, config.python_roots) if language is Language.PYTHON else None
        )
        macros = macro_set(config.c)
        return parse_source(
            entry.path, entry.data, language, module, detail=detail, macros=macros
        ), None
    except (ContractError, IngestError) as exc:
        where = f" (line {exc.line})" if exc.line is not None else ""
        return None, f"{exc.message}{where}"
    except RecursionError:
        return None, "nesting too deep to parse"
    except (ValueError, UnicodeDecodeError, OSError) as exc:  # a parser refusing odd input
        return None, f"unparsable: {exc}"


def parse_document(entry: SourceFile) -> DocPage:
    """A doc page by its format (IngestError for a PDF that cannot be read, with why)."""
    if entry.language is Language.PDF:
        return parse_pdf(entry.data, entry.path)
    text = entry.data.decode("utf-8")
    if entry.language is Language.RST:
        return parse_rst_text(text, entry.path)
    if entry.language is Language.TEXT:
        return parse_plain_text(text, entry.path)
    return parse_markdown_text(text, entry.path)


def parse_many(
    config: StackmapConfig, entries: Sequence[SourceFile], tick: Callable[[str], None]
) -> list[parallel.Parsed]:
    """``parse_one`` over ``entries``, in order, calling ``tick(path)`` after each: each
    file's record, why it was skipped (or None), and the record's parse-cache text."""
    if parallel.enabled(entries):
        return parallel.parse_split(entries, lambda entry: parse_one(config, entry), tick)
    out: list[parallel.Parsed] = []
    for entry in entries:
        out.append(parallel.with_text(parse_one(config, entry)))
        tick(entry.path)
    return out
