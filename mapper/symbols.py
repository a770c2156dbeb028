"""What parsing code yields: languages, symbol kinds, locations, signatures, symbols, references.

The records the parsers (:mod:`mapper.ingest`) produce and the graph builder consumes; the
graph vocabulary built from them (nodes, edges, evidence) is :mod:`mapper.model`, which also
re-exports these names. Records are frozen and slotted; collections inside them are tuples so a
record is hashable and can be compared between two ingests.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass


class SymbolKind(enum.StrEnum):
    FUNCTION = "function"
    CLASS = "class"
    METHOD = "method"
    STRUCT = "struct"
    ENUM = "enum"
    ENUMERATOR = "enumerator"
    MACRO = "macro"
    IOCTL = "ioctl"
    RPC = "rpc"
    SERVICE = "service"
    MESSAGE = "message"
    FIELD = "field"
    CONSTANT = "constant"
    KERNEL = "kernel"  # CUDA __global__
    OPERATOR = "operator"  # an operator descriptor file (NAME.opdesc.json)


class Language(enum.StrEnum):
    PYTHON = "python"
    C = "c"
    CPP = "cpp"
    CUDA = "cuda"
    PROTO = "proto"
    MARKDOWN = "markdown"
    RST = "rst"  # reStructuredText documents
    TEXT = "text"  # plain-text documents
    PDF = "pdf"
    YAML = "yaml"
    JSON = "json"  # operator descriptors (*.opdesc.json) only


@dataclass(frozen=True, slots=True)
class Location:
    """A place in the repository; ``path`` is relative to the repository root, POSIX style."""

    path: str
    line: int | None = None

    def __str__(self) -> str:
        return self.path if self.line is None else f"{self.path}:{self.line}"


@dataclass(frozen=True, slots=True)
class Param:
    name: str
    type: str | None = None  # annotation as written ("Sequence[int]"), C type ("uint64_t")
    default: str | None = None  # the default as written in the source, None when required
    kind: str = "positional"  # positional | keyword_only | var_positional | var_keyword


@dataclass(frozen=True, slots=True)
class Signature:
    params: tuple[Param, ...] = ()
    returns: str | None = None
    is_async: bool = False

    def render(self) -> str:
        def one(p: Param) -> str:
            text = p.name + (f": {p.type}" if p.type else "")
            return text + (f" = {p.default}" if p.default is not None else "")

        prefix = "async " if self.is_async else ""
        ret = f" -> {self.returns}" if self.returns else ""
        return f"{prefix}({', '.join(one(p) for p in self.params)}){ret}"


@dataclass(frozen=True, slots=True)
class Symbol:
    """One definition found in code (or in a proto)."""

    qualname: str  # Python: dotted module path + name; C: the identifier; proto: full name
    kind: SymbolKind
    language: Language
    location: Location
    signature: Signature | None = None
    value: str | None = None  # macro / enumerator / constant value as written
    end_line: int | None = None
    doc: str | None = None

    @property
    def node_id(self) -> str:
        if self.language is Language.PYTHON:
            return f"symbol:{self.qualname}"
        if self.language is Language.PROTO:
            return f"symbol:proto:{self.qualname}"
        if self.language is Language.JSON:
            return f"symbol:opdesc:{self.qualname}"
        return f"symbol:c:{self.location.path}:{self.qualname}"


@dataclass(frozen=True, slots=True)
class Reference:
    """A use of a name in code: a call, an import or an include."""

    kind: str  # "call" | "import" | "include" | "attribute"
    target: str  # the name as written (dotted for Python imports, header path for includes)
    location: Location
    scope: str | None = None  # qualname of the enclosing definition, None at module level
    language: Language = Language.PYTHON
