"""Code symbols and references through tree-sitter: Python, C, C++ and CUDA.

``parse_source`` is pure (bytes in, records out) and never raises on bad syntax: a file with
syntax errors yields the symbols tree-sitter could still recover plus a warning naming the
error lines. ``parse_file`` reads the file (IngestError when it cannot be read or is not UTF-8)
and dispatches ``.proto`` files to :func:`mapper.ingest.proto.parse_proto`.

Conventions of the records produced:

- Python qualnames are module-dotted (``stack.kmd.device.KmdDevice.alloc``); the module is
  derived from the path (``src/`` stripped, ``__init__`` dropped) unless given. Method
  signatures omit the leading ``self``/``cls``. Imports give ``Reference(kind="import")`` with
  the absolute target (relative imports resolved); calls give ``Reference(kind="call")`` with
  the callee as written and the enclosing qualname as scope.
- C/C++/CUDA qualnames are the identifier, prefixed by enclosing namespaces/classes with
  ``::`` in C++; ``#define`` values built with ``_IO``/``_IOR``/``_IOW``/``_IOWR`` are
  ``SymbolKind.IOCTL`` (so is an integer macro whose name says IOCTL); enumerators carry
  their value (implicit ones computed when the previous value is an integer literal); CUDA
  ``__global__`` functions are ``KERNEL``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from mapper.errors import IngestError, UnknownNameError
from mapper.ingest import cbranches, cmacros, cshapes, treesitter
from mapper.ingest.cmacros import MacroSet
from mapper.model import Language, Reference, Symbol

_EXTENSIONS: dict[str, Language] = {
    ".py": Language.PYTHON,
    ".pyi": Language.PYTHON,
    ".c": Language.C,
    ".h": Language.C,
    ".cc": Language.CPP,
    ".cpp": Language.CPP,
    ".cxx": Language.CPP,
    ".c++": Language.CPP,
    ".hh": Language.CPP,
    ".hpp": Language.CPP,
    ".hxx": Language.CPP,
    ".cu": Language.CUDA,
    ".cuh": Language.CUDA,
    ".proto": Language.PROTO,
    ".md": Language.MARKDOWN,
    ".markdown": Language.MARKDOWN,
    ".rst": Language.RST,
    ".txt": Language.TEXT,
    ".pdf": Language.PDF,
    ".yaml": Language.YAML,
    ".yml": Language.YAML,
}

#: Operator descriptors: the one kind of JSON file the map reads (as code of its layer).
DESCRIPTOR_SUFFIX = ".opdesc.json"

# a header is C++ when it declares C++ (a namespace, a class, a template, an alias, a member
# default) or includes a C++ standard header (no ``.h``); ``std::`` in code says so too
_CPP_HINT = re.compile(
    rb"^\s*(?:namespace\s+\w+|class\s+\w+[^;]*$|template\s*<|using\s+\w+\s*=|"
    rb"#\s*include\s*<[a-z_]+>|(?:static\s+)?(?:constexpr|virtual)\s)|\bstd::\w|=\s*default\s*;",
    re.MULTILINE,
)

CODE_LANGUAGES = (Language.PYTHON, Language.C, Language.CPP, Language.CUDA)


@dataclass(frozen=True, slots=True)
class ParsedFile:
    """What one source file defines and uses.

    ``imports`` maps each local name a Python import binds to its absolute target
    (``("np", "numpy")``, ``("KmdDevice", "stack.kmd.device.KmdDevice")``); ``module`` is the
    Python module name; ``loc`` the number of lines.
    """

    path: str
    language: Language
    symbols: tuple[Symbol, ...]
    references: tuple[Reference, ...]
    warnings: tuple[str, ...]
    imports: tuple[tuple[str, str], ...] = ()
    module: str | None = None
    loc: int = 0
    bases: tuple[tuple[str, tuple[str, ...]], ...] = ()  # Python class → base names as written
    # (owner, name, type as written; "" when unknown: no class to resolve): for a class, what its
    # methods assign to self; for a function or the module, a name bound to a constructed or
    # annotated value (``x = Cls(…)``, ``x = make(…)``, ``x: Cls = …``), and under the name
    # ``return`` what it returns constructed (``return Cls(…)``)
    attributes: tuple[tuple[str, str, str], ...] = ()


def language_for(path: str) -> Language | None:
    """The language of a path by its extension (code, proto, Markdown, YAML), else None."""
    name = path.rstrip("/").rpartition("/")[2]  # PurePosixPath(path).suffix, without the object
    if name.endswith(DESCRIPTOR_SUFFIX):
        return Language.JSON
    dot = name.rfind(".")
    return _EXTENSIONS.get(name[dot:].lower()) if 0 < dot < len(name) - 1 else None


def sniff_language(path: str, source: bytes) -> Language | None:
    """Like :func:`language_for`, but a ``.h`` header written in C++ is C++."""
    language = language_for(path)
    if language is Language.C and path.endswith(".h") and _CPP_HINT.search(source):
        return Language.CPP
    return language


def python_module(path: str, roots: tuple[str, ...] = ()) -> str:
    """``stack/kmd/device.py`` → ``stack.kmd.device``; ``pkg/__init__.py`` → ``pkg``.

    A leading ``src/`` is dropped, and so is the longest of ``roots`` (configured source
    roots such as ``python`` or ``user``) the path starts with.
    """
    for root in sorted(roots, key=len, reverse=True):
        prefix = root.strip("/") + "/"
        if path.startswith(prefix):
            path = path[len(prefix) :]
            break
    parts = list(PurePosixPath(path).with_suffix("").parts)
    if parts and parts[0] == "src" and len(parts) > 1:
        parts = parts[1:]
    if parts and parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def parse_source(
    path: str,
    source: bytes,
    language: Language,
    module: str | None = None,
    *,
    detail: bool = True,
    macros: MacroSet | None = None,
) -> ParsedFile:
    """Extract symbols and references from ``source`` (never raises on syntax errors).

    ``detail=False`` leaves out what the map never uses of a test file (the ingest reads
    test files so): Python signatures, docstrings, import references, module-level calls and
    name references (decorators are kept: what a test decorates with, it exercises). Raises
    UnknownNameError for a language tree-sitter does not handle here (proto, Markdown, YAML
    have their own parsers). C/C++/CUDA source is first passed through
    :func:`mapper.ingest.cmacros.rewrite` with ``macros`` (the built-in set when None), which
    keeps every line where it is.
    """
    if language not in CODE_LANGUAGES:
        raise UnknownNameError("code language", str(language), [str(x) for x in CODE_LANGUAGES])
    if language is not Language.PYTHON:
        source = cmacros.rewrite(source, macros if macros is not None else cmacros.BUILTIN)
        source = cshapes.rewrite(source)
    if language is Language.PYTHON:
        tree = treesitter.parse(language, source)
    else:  # conditionals cutting through an expression: their first branch where they break it
        tree = cbranches.parse_resolving_branches(language, source)
    warnings: list[str] = []
    bad = treesitter.error_lines(tree.root_node)
    if bad:
        lines = ", ".join(str(n) for n in bad)
        warnings.append(f"{path}: syntax errors near line(s) {lines}; symbols are partial")
    loc = source.count(b"\n") + (0 if source.endswith(b"\n") or not source else 1)
    if language is Language.PYTHON:
        from mapper.ingest import _python

        mod = module if module is not None else python_module(path)
        symbols, refs, imports, bases, attrs = _python.extract(
            path, tree.root_node, mod, detail=detail
        )
        warn = tuple(warnings)
        return ParsedFile(path, language, symbols, refs, warn, imports, mod, loc, bases, attrs)
    from mapper.ingest import _cfamily

    symbols, refs = _cfamily.extract(path, tree.root_node, language)
    return ParsedFile(path, language, symbols, refs, tuple(warnings), (), None, loc)


def read_text_file(root: Path, rel_path: str) -> bytes:
    """The bytes of a repository file; IngestError when unreadable or not UTF-8 text."""
    try:
        data = (root / rel_path).read_bytes()
    except OSError as exc:
        raise IngestError(f"unreadable: {exc.strerror or exc}", path=rel_path) from exc
    if b"\x00" in data[:8192]:
        raise IngestError("binary file", path=rel_path)
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise IngestError(f"not UTF-8 text (byte {exc.start})", path=rel_path) from exc
    return data


def parse_file(root: Path, rel_path: str) -> ParsedFile:
    """Read and parse one code or proto file; IngestError when it cannot be read at all."""
    language = language_for(rel_path)
    if language is Language.PROTO:
        from mapper.ingest.proto import parse_proto

        return parse_proto(root, rel_path)
    if language not in CODE_LANGUAGES or language is None:
        raise IngestError(f"not a code file ({language or 'unknown language'})", path=rel_path)
    source = read_text_file(root, rel_path)
    return parse_source(rel_path, source, sniff_language(rel_path, source) or language)
