"""SM401 contract-missing-semantics: every interface states sync/async, who synchronises,
the memory rule and the error path (seed 003 §2.2: the questions people forget to write).
SM402 contract-open-question: a field a drafted contract leaves as an open question (the code
could not answer it) is a hole, one finding per question, until someone writes the field;
SM401 does not report that field again."""

from __future__ import annotations

from collections.abc import Iterator

from mapper.check.facts import Facts
from mapper.check.finding import Finding, Policy, RuleInfo, Severity
from mapper.check.registry import Rule

REQUIRED = ("sync", "synchronization", "memory", "errors")
SYNC_VALUES = ("sync", "async")


def _missing(facts: Facts) -> Iterator[Finding]:
    for spec in facts.interfaces():
        asked = {q.field for q in spec.unanswered()}
        problems = [k for k in REQUIRED if not (getattr(spec, k) or "").strip() and k not in asked]
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


def _open(facts: Facts) -> Iterator[Finding]:
    for spec in facts.interfaces():
        for q in spec.unanswered():
            yield SM402.finding(
                f"hole: {spec.id} {q.field} is an open question: {q.question} ({q.reason})",
                subject=f"{spec.id}:{q.field}",
                layer=spec.lower,
                map_loc=q.location,
                fix=f"answer it: write {q.field} for {spec.id} from what the team knows "
                "(the open question may stay as a record of why it was asked)",
            )


SM402 = Rule(
    RuleInfo(
        "SM402",
        "contract-open-question",
        Severity.WARNING,
        Policy.MAP_STALE,
        "A drafted contract leaves a field as an open question the code could not answer.",
        "Answer the question: write the field (sync, synchronization, memory or errors).",
    ),
    _open,
)
RULES = (SM401, SM402)
