"""``stackmap check``: compare the map (contracts, docs, scenarios, layer config) with the code.

Rules live in :mod:`mapper.check.rules` (one module per family, registered by stable id in
:mod:`mapper.check.registry`); they read parse-only facts (:mod:`mapper.check.facts`) and
return :class:`~mapper.check.finding.Finding` records that :mod:`mapper.check.history`
classifies as map stale or code wrong. One :class:`~mapper.check.report.Report` renders to
every output format (:mod:`mapper.check.formats`); :mod:`mapper.check.baseline` waives
accepted findings until their expiry date. The rules are documented, with an example and a
fix each, in ``knowledge_base/reference/check-rules.md``.
"""

from __future__ import annotations

from mapper.check.finding import Classification, Finding, Policy, RuleInfo, Severity
from mapper.check.report import Report
from mapper.check.runner import run_check

__all__ = [
    "Classification",
    "Finding",
    "Policy",
    "Report",
    "RuleInfo",
    "Severity",
    "run_check",
]
