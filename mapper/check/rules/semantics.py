"""SM401 contract-missing-semantics: every interface states sync/async, who synchronises,
the memory rule and the error path (seed 003 §2.2: the questions people forget to write)."""

from __future__ import annotations

from collections.abc import Iterator

from mapper.check.facts import Facts
from mapper.check.finding import Finding, Policy, RuleInfo, Severity
from mapper.check.registry import Rule

REQUIRED = ("sync", "synchronization", "memory", "errors")
SYNC_VALUES = ("sync", "async")


def _missing(facts: Facts) -> Iterator[Finding]:
    for spec in facts.interfaces():
        problems = [k for k in REQUIRED if not (getattr(spec, k) or "").strip()]
        sync = (spec.sync or "").strip()
        if sync and sync.split()[0].strip(",;:().").lower() not in SYNC_VALUES:
            problems.append(f"sync ({sync!r} is neither sync nor async)")
        if not problems:
            continue
        yield SM401.finding(
            f"interface {spec.id} does not state: {', '.join(problems)}",
            subject=spec.id,
            layer=spec.lower,
            map_loc=spec.location,
            map_end=facts.span_end(spec),
            fix=f"add {', '.join(p.split()[0] for p in problems)} to {spec.id} "
            "(write `none` with a reason where nothing applies)",
        )


SM401 = Rule(
    RuleInfo(
        "SM401",
        "contract-missing-semantics",
        Severity.WARNING,
        Policy.MAP_STALE,
        "A contract interface lacks sync/async, synchronisation responsibility, memory "
        "release rule or error path.",
        "Write the missing fields; `none` with a reason where nothing applies.",
    ),
    _missing,
)
RULES = (SM401,)
