"""The map's vocabulary: node, edge and evidence kinds and the typed records of the graph.

Every other part of the map tool (graph, index, check, impact, scenarios, agent, web) speaks in
these types; the records parsing produces (symbols, references, signatures, locations) live in
:mod:`mapper.symbols` and are named here too. Records are frozen and slotted.

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

An :class:`Edge` keeps **every** piece of :class:`Evidence` for its claim, each with its kind,
location and confidence: a dependency a contract or a page declares and one the code shows are
two items on the same edge, so "the map says X, the code says Y" is a question about one edge.
Declared evidence kinds are :data:`DECLARED`; the others are observed.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from mapper.symbols import Language, Location, Param, Reference, Signature, Symbol, SymbolKind

__all__ = [  # the parse records are defined in mapper.symbols and named here too
    "DECLARED",
    "SCHEMA_VERSION",
    "Edge",
    "EdgeAttrs",
    "EdgeKind",
    "Evidence",
    "EvidenceKind",
    "Hole",
    "Language",
    "Location",
    "Node",
    "NodeKind",
    "Param",
    "Provenance",
    "Reference",
    "Signature",
    "Symbol",
    "SymbolKind",
    "evidence_rank",
]

#: Bumped whenever the persisted graph's shape changes; a store of another version is rebuilt.
SCHEMA_VERSION = 4


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
    INHERITS = "inherits"  # class/struct → its base
    OVERRIDES = "overrides"  # method → the base-class method (or slot) it replaces
    REFERENCES = "references"  # symbol → a constant, enum member or type it uses
    REGISTERS = "registers"  # registered symbol → the decorator/registry call entering it


class EvidenceKind(enum.StrEnum):
    """Why an edge is on the map. Closed: a new source of claims adds a member here."""

    CODE_REFERENCE = "code_reference"  # a call or name use in code
    IMPORT = "import"  # a Python import or a C #include
    REGISTRATION = "registration"  # a decorator or registry call
    INHERITANCE = "inheritance"  # a base class, an overridden method
    DEFINITION = "definition"  # a file defines a symbol, a class contains a method
    CONFIG = "config"  # stackmap.toml (layers, their order, their path globs)
    CONTRACT = "contract"  # a contract YAML entry
    DOC_FRONT_MATTER = "doc_front_matter"  # a knowledge-base page's front matter
    DOC_MENTION = "doc_mention"  # a backticked name in a page's text
    TEST_COVERAGE = "test_coverage"  # a test calls it
    SIMILARITY = "similarity"  # embeddings placed it
    LLM = "llm"  # a language model proposed it


#: Evidence the map declares (contracts, pages, config); the rest is observed in code.
DECLARED = frozenset(
    {
        EvidenceKind.CONFIG,
        EvidenceKind.CONTRACT,
        EvidenceKind.DOC_FRONT_MATTER,
        EvidenceKind.DOC_MENTION,
    }
)


class Provenance(enum.StrEnum):
    TREE_SITTER = "tree-sitter"
    CONTRACT = "contract"
    DOC = "doc"
    PROTOC = "protoc"
    CONFIG = "config"
    INFERRED = "inferred"
    EMBEDDING = "embedding"
    LLM = "llm"


@dataclass(frozen=True, slots=True)
class Hole:
    """A component (or doc) the material does not place: which of the three questions fail."""

    node: str
    missing: tuple[str, ...]  # ("layer", "upstream", "downstream"); an interface's open fields
    reason: str
    location: Location | None = None


@dataclass(frozen=True, slots=True)
class EdgeAttrs:
    """What every edge carries: where the claim comes from and how sure it is."""

    kind: EdgeKind
    provenance: Provenance
    confidence: float = 1.0
    location: Location | None = None
    extra: tuple[tuple[str, Any], ...] = field(default=())
    evidence: EvidenceKind | None = None  # None: derived from kind and provenance


@dataclass(frozen=True, slots=True)
class Evidence:
    """One reason for an edge: what kind of claim, where it is written, how sure it is."""

    kind: EvidenceKind
    path: str | None = None
    line: int | None = None
    confidence: float = 1.0
    detail: str = ""  # e.g. the decorator as written, the inferred-from rule

    @property
    def declared(self) -> bool:
        return self.kind in DECLARED

    def cite(self) -> str:
        """``path:line (kind)``, or the kind alone when the claim has no place."""
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where} ({self.kind.value})" if self.path else self.kind.value

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind.value,
            "path": self.path,
            "line": self.line,
            "confidence": self.confidence,
            "detail": self.detail,
        }


@dataclass(frozen=True, slots=True)
class Node:
    """A node of the map. ``attrs`` holds the kind-specific fields (JSON values); it is not part
    of equality or the hash, the id is."""

    id: str
    kind: NodeKind
    name: str
    layer: str | None = None
    path: str | None = None
    line: int | None = None
    attrs: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    def get(self, key: str, default: Any = None) -> Any:
        return self.attrs.get(key, default)

    def to_dict(self) -> dict[str, Any]:
        head = {"id": self.id, "kind": self.kind.value, "name": self.name}
        place = {"layer": self.layer, "path": self.path, "line": self.line}
        return {**head, **place, "attrs": dict(self.attrs)}


@dataclass(frozen=True, slots=True)
class Edge:
    """A typed claim from ``source`` to ``target`` with all its evidence, strongest first.

    ``key`` tells apart edges of one kind between one pair (a scenario's ordered steps);
    ``attrs`` holds extra fields such as a step's ``order`` and ``action``.
    """

    source: str
    target: str
    kind: EdgeKind
    evidence: tuple[Evidence, ...]
    key: str = ""
    attrs: Mapping[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @property
    def confidence(self) -> float:
        return max((e.confidence for e in self.evidence), default=0.0)

    @property
    def citation(self) -> Evidence:
        """The strongest evidence: highest confidence, observed before declared, placed first."""
        return self.evidence[0]

    def declared(self) -> tuple[Evidence, ...]:
        return tuple(e for e in self.evidence if e.declared)

    def observed(self) -> tuple[Evidence, ...]:
        return tuple(e for e in self.evidence if not e.declared)

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "target": self.target,
            "kind": self.kind.value,
            "key": self.key,
            "confidence": self.confidence,
            "evidence": [e.to_dict() for e in self.evidence],
            **({"attrs": dict(self.attrs)} if self.attrs else {}),
        }


def evidence_rank(e: Evidence) -> tuple[float, bool, bool, str, int]:
    """Sort key putting the strongest evidence first (see :attr:`Edge.citation`)."""
    return (-e.confidence, e.declared, e.path is None, e.path or "", e.line or 0)
