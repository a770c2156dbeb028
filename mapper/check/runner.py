"""Run the rules over a repository's stored map and build the report, findings on their nodes.

The map is refreshed first when it is missing or older than the files (see
:mod:`mapper.check.onmap`); the rules read what ingest parsed, and every finding is placed on
the map nodes it is about (:func:`mapper.query.findings.placed`).
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from mapper import collector
from mapper.check import registry
from mapper.check.facts import Facts
from mapper.check.finding import Classification, Finding
from mapper.check.history import GitHistory
from mapper.check.onmap import facts_from_map
from mapper.check.report import Report
from mapper.check.rules import register_all
from mapper.config import StackmapConfig


def run_check(
    root: Path,
    *,
    rules: Iterable[str] | None = None,
    config: StackmapConfig | None = None,
    history: bool = True,
) -> Report:
    """Check the map of the repository at ``root`` against its code. Synchronous.

    ``rules`` selects rules by id or name (all when empty; UnknownNameError lists the known
    ones). Raises ConfigError / ContractError / IngestError when the map cannot be read.
    Findings come classified (map stale / code wrong / unknown) when ``history`` is on, and
    carry the ids of the map nodes they are about.
    """
    start = time.perf_counter()
    with collector.paused():  # see mapper.collector for the measured gain
        report = _run(root, rules, config, history)
    return replace(report, duration_s=time.perf_counter() - start)


def _run(
    root: Path, rules: Iterable[str] | None, config: StackmapConfig | None, history: bool
) -> Report:
    from mapper.query import open_map
    from mapper.query.findings import placed

    register_all()
    selected = registry.select(rules)
    facts = facts_from_map(root, config)
    findings = check_facts(facts, selected, GitHistory(facts.root) if history else None)
    if findings:  # the map is opened to place findings on their nodes (none: no need)
        findings = placed(open_map(facts.root, facts.config), findings)
    layers = tuple(layer.id for layer in facts.config.layers)
    return Report(
        root=str(facts.root),
        rules=tuple(r.info for r in selected),
        layers=layers,
        findings=findings,
        duration_s=0.0,
        warnings=tuple(facts.warnings),
    )


def check_facts(
    facts: Facts, rules: Iterable[registry.Rule], history: GitHistory | None
) -> tuple[Finding, ...]:
    """Every rule's findings, deduplicated by fingerprint, classified, in report order.

    A finding in generated code (the config's ``generated`` globs) is dropped: nobody edits
    that code, the generator or its input is what a person fixes."""
    unique: dict[str, Finding] = {}
    generated = facts.config.is_generated
    for rule in rules:
        for finding in rule.check(facts):
            if finding.code is not None and generated(finding.code.path):
                continue
            if finding.layer is None and finding.code is not None:
                finding = replace(finding, layer=facts.config.layer_of(finding.code.path))
            if finding.classification is Classification.UNKNOWN and history is not None:
                finding = finding.classified(history.classify(finding, rule.info.policy))
            unique.setdefault(finding.fingerprint, finding)
    return tuple(sorted(unique.values(), key=Finding.sort_key))
