"""The records a check produces: severities, classifications, rules and findings.

A finding is one drift between the map (contracts, docs, scenarios, layer config) and the code.
It names both sides: where in the code (``code``) and where on the map (``map_loc``), so a reader
can open either, and the history can tell which side moved last (see :mod:`mapper.check.history`).
"""

from __future__ import annotations

import enum
import hashlib
from dataclasses import dataclass, replace

from mapper.model import Location


class Severity(enum.StrEnum):
    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"

    @property
    def rank(self) -> int:
        """Higher is more severe: note 1, warning 2, error 3."""
        return {"note": 1, "warning": 2, "error": 3}[self.value]


class Classification(enum.StrEnum):
    """Which side of a drift has to change (seed 003 §6.1)."""

    MAP_STALE = "map-stale"  # the code moved on; update the contract / doc
    CODE_WRONG = "code-wrong"  # the code does not follow the map; fix the code
    UNKNOWN = "unknown"  # outside git, uncommitted, or both sides changed in one commit


class Policy(enum.StrEnum):
    """How a rule classifies its findings."""

    HISTORY = "history"  # code changed last → map stale; map changed last → code wrong
    CODE_WRONG = "code-wrong"  # always code wrong (layering: the architecture is the rule)
    MAP_STALE = "map-stale"  # always map stale (the map is incomplete or names what it lacks)


@dataclass(frozen=True, slots=True)
class RuleInfo:
    """What a rule is: stable id, name, default severity, classification policy, help."""

    id: str  # "SM102"
    name: str  # "signature-drift"
    severity: Severity
    policy: Policy
    summary: str  # one line, used as SARIF shortDescription
    fix: str  # the generic fix, used as SARIF help


@dataclass(frozen=True, slots=True)
class Finding:
    """One drift. ``subject`` is a line-independent key: the same drift keeps its fingerprint
    when unrelated edits move it to another line."""

    rule: str
    severity: Severity
    message: str
    subject: str
    fix: str
    layer: str | None = None
    code: Location | None = None
    map_loc: Location | None = None
    code_end: int | None = None  # last line of the code span, for the history
    map_end: int | None = None  # last line of the map span, for the history
    classification: Classification = Classification.UNKNOWN
    nodes: tuple[str, ...] = ()  # ids of the map nodes the drift is about

    @property
    def fingerprint(self) -> str:
        """Stable id: sha256 of rule and subject (not of lines), 16 hex digits."""
        return hashlib.sha256(f"{self.rule}\0{self.subject}".encode()).hexdigest()[:16]

    @property
    def primary(self) -> Location | None:
        """The location shown first: the code side when there is one, else the map side."""
        return self.code or self.map_loc

    def classified(self, classification: Classification) -> Finding:
        return replace(self, classification=classification)

    def sort_key(self) -> tuple[str, str, int, str, str]:
        loc = self.primary
        return (
            self.layer or "~",
            loc.path if loc else "",
            (loc.line or 0) if loc else 0,
            self.rule,
            self.subject,
        )

    def to_dict(self) -> dict[str, object]:
        return {
            "rule": self.rule,
            "severity": self.severity.value,
            "message": self.message,
            "layer": self.layer,
            "code": str(self.code) if self.code else None,
            "map": str(self.map_loc) if self.map_loc else None,
            "classification": self.classification.value,
            "fix": self.fix,
            "subject": self.subject,
            "fingerprint": self.fingerprint,
            "nodes": list(self.nodes),
        }
