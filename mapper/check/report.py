"""The one report object every output format renders (text, JSON, Markdown, SARIF, JUnit)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from mapper.check.finding import Finding, RuleInfo, Severity

#: Exit status: map and code agree (or every finding is below ``--fail-on`` or waived).
EXIT_OK = 0
#: Exit status: at least one active finding at or above ``--fail-on``.
EXIT_FINDINGS = 1


@dataclass(frozen=True, slots=True)
class Report:
    """The result of one ``stackmap check`` run.

    ``findings`` are the active ones (new, or matched by an expired waiver — their fingerprints
    are in ``expired``); ``waived`` are matched by a valid baseline entry; ``unused_waivers``
    are baseline fingerprints that matched nothing (the drift was fixed: drop the entry).
    """

    root: str
    rules: tuple[RuleInfo, ...]
    layers: tuple[str, ...]
    findings: tuple[Finding, ...]
    waived: tuple[Finding, ...] = ()
    expired: frozenset[str] = field(default_factory=frozenset)
    unused_waivers: tuple[str, ...] = ()
    duration_s: float = 0.0
    warnings: tuple[str, ...] = ()  # files the parsers could not read (the check ran without them)

    def rule(self, rule_id: str) -> RuleInfo | None:
        return next((r for r in self.rules if r.id == rule_id), None)

    def failing(self, fail_on: Severity) -> tuple[Finding, ...]:
        """The active findings at or above ``fail_on``."""
        return tuple(f for f in self.findings if f.severity.rank >= fail_on.rank)

    def exit_code(self, fail_on: Severity) -> int:
        return EXIT_FINDINGS if self.failing(fail_on) else EXIT_OK

    def counts(self) -> dict[str, int]:
        """Active findings per severity (every severity present, zero included)."""
        out = {s.value: 0 for s in Severity}
        for f in self.findings:
            out[f.severity.value] += 1
        return out

    def by_layer(self) -> Iterator[tuple[str, tuple[Finding, ...]]]:
        """Active findings grouped by layer, layers in stack order, then "(no layer)"."""
        order = {name: i for i, name in enumerate(self.layers)}
        groups: dict[str, list[Finding]] = {}
        for f in sorted(self.findings, key=Finding.sort_key):
            groups.setdefault(f.layer or "(no layer)", []).append(f)
        for name in sorted(groups, key=lambda n: (order.get(n, len(order)), n)):
            yield name, tuple(groups[name])

    def is_expired(self, finding: Finding) -> bool:
        return finding.fingerprint in self.expired
