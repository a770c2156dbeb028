"""The map's vocabulary: node and edge kinds, provenance, and the typed records ingest produces.

Every other part of the map tool (graph, index, check, impact, scenarios, agent, web) speaks in
these types. Records are frozen and slotted; collections inside them are tuples so a record is
hashable and can be compared between two ingests.

Node ids are stable strings, prefixed by kind so they never collide::

    layer:kmd
    component:kmd.memory
    interface:umd_kmd.alloc
    scenario:new-op-quantize
    symbol:stack.kmd.memory.AddressSpace.free       (Python: dotted qualname)
    symbol:c:stack/kmd/include/refstack_kmd.h:REFSTACK_IOCTL_ALLOC   (C/C++/CUDA: path-qualified)
    symbol:proto:refstack.umd.v1.InstructionTranslator.TranslateOp
    doc:knowledge_base/kmd/memory.md#freeing-memory
    test:tests/stack/kmd/test_memory.py::test_double_free
    file:stack/kmd/memory.py
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

#: Bumped whenever the persisted graph's shape changes; a store of another version is rebuilt.
SCHEMA_VERSION = 1


class NodeKind(enum.StrEnum):
    LAYER = "layer"
    COMPONENT = "component"
    INTERFACE = "interface"
    SCENARIO = "scenario"
    SYMBOL = "symbol"
    DOC = "doc"
    TEST = "test"
    FILE = "file"


class EdgeKind(enum.StrEnum):
    CONTAINS = "contains"  # layer → component → file → symbol; doc page → section
    DEFINES = "defines"  # file → symbol
    PROVIDES = "provides"  # lower layer/component → interface
    CONSUMES = "consumes"  # upper layer/component → interface
    IMPLEMENTS = "implements"  # symbol → interface
    CALLS = "calls"  # symbol → symbol
    IMPORTS = "imports"  # file → file/module (Python import, C #include)
    DESCRIBES = "describes"  # doc → layer/component/interface/symbol
    COVERS = "covers"  # test → symbol/component
    STEP = "step"  # scenario → component/interface, ordered by the ``order`` attribute
    ADJACENT = "adjacent"  # layer → the layer directly below it


class Provenance(enum.StrEnum):
    TREE_SITTER = "tree-sitter"
    CONTRACT = "contract"
    DOC = "doc"
    PROTOC = "protoc"
    CONFIG = "config"
    INFERRED = "inferred"
    EMBEDDING = "embedding"
    LLM = "llm"


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


class Language(enum.StrEnum):
    PYTHON = "python"
    C = "c"
    CPP = "cpp"
    CUDA = "cuda"
    PROTO = "proto"
    MARKDOWN = "markdown"
    YAML = "yaml"


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
        return f"symbol:c:{self.location.path}:{self.qualname}"


@dataclass(frozen=True, slots=True)
class Reference:
    """A use of a name in code: a call, an import or an include."""

    kind: str  # "call" | "import" | "include" | "attribute"
    target: str  # the name as written (dotted for Python imports, header path for includes)
    location: Location
    scope: str | None = None  # qualname of the enclosing definition, None at module level
    language: Language = Language.PYTHON


@dataclass(frozen=True, slots=True)
class InterfaceSpec:
    """One interface entry of a contract YAML file (schema in contracts/README.md)."""

    id: str
    contract: str
    kind: str
    symbol: str | None
    upper: str  # consuming layer id
    lower: str  # providing layer id
    location: Location
    signature: Signature | None = None
    sync: str | None = None
    synchronization: str | None = None
    memory: str | None = None
    errors: str | None = None
    description: str | None = None


@dataclass(frozen=True, slots=True)
class ConstantSpec:
    """A set of constants that must agree across languages (a contract's ``constants`` entry)."""

    id: str
    contract: str
    location: Location
    python: str | None = None
    proto: str | None = None
    c: str | None = None


@dataclass(frozen=True, slots=True)
class ScenarioStep:
    order: int
    target: str  # "component:…" or "interface:…" node id as named by the page
    action: str
    location: Location


@dataclass(frozen=True, slots=True)
class DocSection:
    """One heading-delimited section of a Markdown page, with the page's front matter."""

    page: str  # path of the page
    anchor: str  # slug of the heading ("" for the text before the first heading)
    heading: str
    text: str
    location: Location
    front_matter: tuple[tuple[str, Any], ...] = ()

    @property
    def node_id(self) -> str:
        return f"doc:{self.page}#{self.anchor}" if self.anchor else f"doc:{self.page}"


@dataclass(frozen=True, slots=True)
class Hole:
    """A component (or doc) the material does not place: which of the three questions fail."""

    node: str
    missing: tuple[str, ...]  # subset of ("layer", "upstream", "downstream")
    reason: str
    location: Location | None = None


@dataclass(frozen=True, slots=True)
class Skip:
    """A file the ingest did not read, and why."""

    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class EdgeAttrs:
    """What every edge carries: where the claim comes from and how sure it is."""

    kind: EdgeKind
    provenance: Provenance
    confidence: float = 1.0
    location: Location | None = None
    extra: tuple[tuple[str, Any], ...] = field(default=())
