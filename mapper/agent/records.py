"""The agent's typed records: intents, entities, citations, tool calls and the answer.

Every record is frozen and slotted and has ``to_json()`` returning plain JSON data, so the CLI,
the web routes and the evaluation print the same thing.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class Intent(enum.StrEnum):
    """What kind of question was asked; one answer template per intent."""

    LOCATE = "locate"  # where is X, which component does X
    EXPLAIN_PATH = "explain_path"  # how does A reach B, walk X down the stack
    IMPACT = "impact"  # what breaks / changes if X changes
    NEW_OP = "new_op"  # what changes to add an op
    ERRORS = "errors"  # faults, error recovery, which error is raised
    PERFORMANCE = "performance"  # slow model, bottleneck
    ROLE = "role"  # what a role engineer should know
    MAP_VS_CODE = "map_vs_code"  # does the map agree with the code
    UNKNOWN = "unknown"  # outside what the map records


class CitationKind(enum.StrEnum):
    CODE = "code"  # a definition or a use in source code
    DOC = "doc"  # a knowledge-base page or section
    CONTRACT = "contract"  # an interface entry of a contract file
    TEST = "test"  # a test function
    SCENARIO = "scenario"  # a scenario page's step


@dataclass(frozen=True, slots=True)
class Citation:
    """A place in the repository and the text that must be found there.

    ``needle`` is what the citation claims the place holds (a name, a heading, an interface id);
    validation reads ``path`` around ``line`` and requires it there.
    """

    path: str
    line: int
    kind: CitationKind
    needle: str
    node: str | None = None
    label: str = ""

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"

    def to_json(self) -> dict[str, Any]:
        return {
            "path": self.path,
            "line": self.line,
            "where": self.where,
            "kind": self.kind.value,
            "needle": self.needle,
            "node": self.node,
            "label": self.label,
        }


@dataclass(frozen=True, slots=True)
class Entity:
    """A node of the map the question names."""

    id: str
    kind: str
    name: str
    layer: str | None
    matched: str  # the words of the question that named it
    score: float

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "name": self.name,
            "layer": self.layer,
            "matched": self.matched,
            "score": round(self.score, 3),
        }


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool run: its name, arguments, a one-line summary of the result, its duration."""

    tool: str
    args: tuple[tuple[str, Any], ...]
    summary: str
    ms: float
    citations: int = 0

    def to_json(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "args": dict(self.args),
            "summary": self.summary,
            "ms": round(self.ms, 2),
            "citations": self.citations,
        }


@dataclass(frozen=True, slots=True)
class Answer:
    """What :func:`mapper.agent.ask` returns.

    ``known`` is False when the map does not hold what was asked (the answer then says so and
    lists the nearest things it has). ``dropped`` holds citations a chat model gave that no
    tool returned or that do not check out; the claims carrying them were removed.
    """

    question: str
    answer: str
    intent: Intent
    entities: tuple[Entity, ...]
    citations: tuple[Citation, ...]
    tool_calls: tuple[ToolCall, ...]
    latency_ms: float
    known: bool = True
    role: str | None = None
    mode: str = "default"  # "default" (deterministic) or "model"
    warnings: tuple[str, ...] = ()
    dropped: tuple[str, ...] = field(default=())

    def to_json(self) -> dict[str, Any]:
        return {
            "question": self.question,
            "answer": self.answer,
            "intent": self.intent.value,
            "known": self.known,
            "role": self.role,
            "mode": self.mode,
            "entities": [e.to_json() for e in self.entities],
            "citations": [c.to_json() for c in self.citations],
            "tool_calls": [t.to_json() for t in self.tool_calls],
            "latency_ms": round(self.latency_ms, 2),
            "warnings": list(self.warnings),
            "dropped": list(self.dropped),
        }
