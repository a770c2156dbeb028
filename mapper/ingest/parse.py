"""Parse one scanned file into its record, turning per-file failures into skips."""

from __future__ import annotations

from typing import Any

from mapper.config import StackmapConfig
from mapper.errors import ContractError, IngestError
from mapper.ingest.code import parse_source, sniff_language
from mapper.ingest.contracts import parse_contract
from mapper.ingest.docs import parse_markdown_text
from mapper.ingest.proto import parse_proto
from mapper.ingest.scan import Category, SourceFile


def parse_one(config: StackmapConfig, entry: SourceFile) -> tuple[Any, str | None]:
    """(record, None) or (None, reason the file was skipped). Never raises for bad input."""
    try:
        if entry.category is Category.CONTRACT:
            layers = [layer.id for layer in config.layers]
            return parse_contract(entry.data.decode("utf-8"), entry.path, layers), None
        if entry.category is Category.DOC:
            return parse_markdown_text(entry.data.decode("utf-8"), entry.path), None
        if entry.category is Category.PROTO:
            return parse_proto(config.root, entry.path), None
        language = sniff_language(entry.path, entry.data) or entry.language
        return parse_source(entry.path, entry.data, language), None
    except (ContractError, IngestError) as exc:
        where = f" (line {exc.line})" if exc.line is not None else ""
        return None, f"{exc.message}{where}"
    except RecursionError:
        return None, "nesting too deep to parse"
