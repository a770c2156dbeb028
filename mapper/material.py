"""The map's material records: contract entries, doc sections and scenario steps.

What :mod:`mapper.ingest.contracts` and :mod:`mapper.ingest.docs` read from the declared side
of the map (contracts, knowledge-base pages); the graph vocabulary itself is in
:mod:`mapper.model`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from mapper.model import Location, Signature


@dataclass(frozen=True, slots=True)
class OpenQuestion:
    """A contract field the material does not answer (seed 003: ask, don't invent): which
    field, the question, and why the code could not answer it. A hole until the field is
    written."""

    field: str  # one of sync, synchronization, memory, errors
    question: str
    reason: str
    location: Location


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
    open_questions: tuple[OpenQuestion, ...] = ()

    def unanswered(self) -> tuple[OpenQuestion, ...]:
        """The open questions whose field is still not written."""
        return tuple(q for q in self.open_questions if not (getattr(self, q.field) or "").strip())


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
class Skip:
    """A file the ingest did not read, and why."""

    path: str
    reason: str
