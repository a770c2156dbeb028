"""JSON for machines: the summary, the rules run, active and waived findings."""

from __future__ import annotations

import json

from mapper import __version__
from mapper.check.report import Report


def render(report: Report) -> str:
    doc = {
        "tool": "stackmap",
        "version": __version__,
        "root": report.root,
        "summary": {
            "findings": len(report.findings),
            "by_severity": report.counts(),
            "waived": len(report.waived),
            "expired_waivers": len(report.expired),
            "duration_s": round(report.duration_s, 3),
        },
        "rules": [
            {"id": r.id, "name": r.name, "severity": r.severity.value, "policy": r.policy.value}
            for r in report.rules
        ],
        "findings": [
            {**f.to_dict(), "waiver_expired": report.is_expired(f)} for f in report.findings
        ],
        "waived": [f.to_dict() for f in report.waived],
        "unused_waivers": list(report.unused_waivers),
    }
    return json.dumps(doc, indent=2, sort_keys=True) + "\n"
