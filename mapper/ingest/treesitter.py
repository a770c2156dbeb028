"""Tree-sitter plumbing: grammars from the per-language wheels, queries from ``queries/*.scm``.

Grammars ship compiled inside the ``tree-sitter-<lang>`` wheels; nothing is downloaded. Parsers
and compiled queries are cached per language for the life of the process (not thread-safe:
one ingest parses on one thread).
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from importlib import resources
from types import ModuleType

import tree_sitter as ts
import tree_sitter_c
import tree_sitter_cpp
import tree_sitter_cuda
import tree_sitter_python

from mapper.errors import UnknownNameError
from mapper.model import Language

_GRAMMARS: dict[Language, ModuleType] = {}


def register(language: Language, grammar: ModuleType) -> None:
    """Register a grammar module (one exposing ``language()``) for a language."""
    _GRAMMARS[language] = grammar


register(Language.PYTHON, tree_sitter_python)
register(Language.C, tree_sitter_c)
register(Language.CPP, tree_sitter_cpp)
register(Language.CUDA, tree_sitter_cuda)


def supported() -> tuple[Language, ...]:
    return tuple(_GRAMMARS)


@functools.cache
def language(lang: Language) -> ts.Language:
    try:
        grammar = _GRAMMARS[lang]
    except KeyError:
        known = [str(k) for k in _GRAMMARS]
        raise UnknownNameError("tree-sitter language", str(lang), known) from None
    return ts.Language(grammar.language())


@functools.cache
def parser(lang: Language) -> ts.Parser:
    return ts.Parser(language(lang))


@functools.cache
def query(lang: Language, without: frozenset[str] = frozenset()) -> ts.Query:
    """The language's query (``queries/<lang>.scm``), with the captures named in ``without``
    disabled (tree-sitter then neither records them nor pays for them)."""
    source = resources.files("mapper.ingest").joinpath("queries", f"{lang.value}.scm")
    compiled = ts.Query(language(lang), source.read_text(encoding="utf-8"))
    for name in sorted(without):
        compiled.disable_capture(name)
    return compiled


def parse(lang: Language, source: bytes) -> ts.Tree:
    return parser(lang).parse(source)


def matches(lang: Language, root: ts.Node) -> Iterator[dict[str, list[ts.Node]]]:
    """Each match of the language's query as ``{capture name: nodes}``, in document order."""
    for _pattern, captures in ts.QueryCursor(query(lang)).matches(root):
        yield captures


def captures(
    lang: Language, root: ts.Node, without: frozenset[str] = frozenset()
) -> dict[str, list[ts.Node]]:
    """The captures of the language's query, but those in ``without``: ``{capture name:
    nodes}`` (their order may vary between runs: sort what depends on it)."""
    return ts.QueryCursor(query(lang, without)).captures(root)


def text(node: ts.Node | None) -> str:
    if node is None:
        return ""
    raw = node.text  # read once: each read slices the source anew
    return "" if raw is None else raw.decode("utf-8", errors="replace")


def line(node: ts.Node) -> int:
    return node.start_point[0] + 1


def end_line(node: ts.Node) -> int:
    return node.end_point[0] + 1


def error_lines(root: ts.Node, limit: int = 5) -> list[int]:
    """Lines of the first syntax errors (ERROR or MISSING nodes) under ``root``."""
    found: list[int] = []
    stack = [root]
    while stack and len(found) < limit:
        node = stack.pop()
        if not node.has_error:
            continue
        if node.is_error or node.is_missing:
            found.append(line(node))
            continue
        stack.extend(reversed(node.children))
    return sorted(found)
