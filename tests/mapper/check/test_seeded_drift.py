"""The seeded-drift suite: one known drift per rule applied to the clean fixture stack.

The clean stack has zero findings. Each case commits one drift on top of it (so the git
classification is exercised) and asserts the exact finding set: rule, code location, map
location, classification and the map nodes each finding is about. Recall on the seeded set
is 100 %, false positives 0.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from mapper.check import run_check
from tests.mapper.check.seeded import Drift, replace_in
from tests.mapper.check.seeded_code import CODE_DRIFTS
from tests.mapper.check.seeded_map import MAP_DRIFTS

DRIFTS: list[Drift] = [*CODE_DRIFTS, *MAP_DRIFTS]


def _observed(root: Path) -> set[tuple[str, str | None, str | None, str, tuple[str, ...]]]:
    report = run_check(root)
    return {
        (
            f.rule,
            str(f.code) if f.code else None,
            str(f.map_loc) if f.map_loc else None,
            f.classification.value,
            f.nodes,
        )
        for f in report.findings
    }


def test_clean_stack_has_no_findings(clean_repo: Path) -> None:
    report = run_check(clean_repo)
    assert report.findings == ()
    assert len(report.rules) >= 11


@pytest.mark.parametrize("drift", DRIFTS, ids=[d.id for d in DRIFTS])
def test_seeded_drift_is_found_exactly(
    clean_repo: Path, commit: Callable[[Path, str], None], drift: Drift
) -> None:
    for edit in drift.edits:
        edit(clean_repo)
    commit(clean_repo, drift.id)
    assert _observed(clean_repo) == set(drift.expected)


def test_every_rule_is_seeded() -> None:
    from mapper.check import registry
    from mapper.check.rules import register_all

    register_all()
    seeded = {rule for d in DRIFTS for rule, *_ in d.expected}
    assert seeded == {r.info.id for r in registry.all_rules()}


def test_uncommitted_drift_is_unknown(clean_repo: Path) -> None:
    DRIFTS[0].edits[0](clean_repo)
    DRIFTS[0].edits[1](clean_repo)
    assert {c for *_, c, _nodes in _observed(clean_repo)} == {"unknown"}


def test_outside_git_everything_is_unknown_or_by_policy(clean_copy: Path) -> None:
    replace_in("fx/umd/session.py", "submit(self, blob: bytes", "submit(self, data: bytes")(
        clean_copy
    )
    replace_in(
        "fx/kmd/device.py",
        '"""Device memory."""\n',
        '"""Device memory."""\n\nfrom fx.umd.session import Session\n',
    )(clean_copy)
    observed = {(rule, cls) for rule, _, _, cls, _ in _observed(clean_copy)}
    assert observed == {("SM102", "unknown"), ("SM202", "code-wrong")}
