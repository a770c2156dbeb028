"""SARIF 2.1.0 for GitHub code scanning: stable rule ids, partial fingerprints, suppressions.

The primary location is the code side (or the map side when the code has nothing to point
at); the other side is a related location. ``partialFingerprints`` carry the finding's
line-independent fingerprint so re-uploads do not open duplicate alerts. Waived findings are
emitted with an external suppression, which closes their alert instead of deleting it.
"""

from __future__ import annotations

import json
from typing import Any

from mapper import __version__
from mapper.check.finding import Finding, Severity
from mapper.check.report import Report
from mapper.model import Location

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
RULES_DOC = "knowledge_base/reference/check-rules.md"
FINGERPRINT_KEY = "stackmapFinding/v1"

_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTE: "note"}


def _physical(loc: Location) -> dict[str, Any]:
    phys: dict[str, Any] = {"artifactLocation": {"uri": loc.path, "uriBaseId": "%SRCROOT%"}}
    if loc.line is not None and loc.line >= 1:
        phys["region"] = {"startLine": loc.line}
    return phys


def _result(f: Finding, index: dict[str, int], report: Report, waived: bool) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": f.rule,
        "level": _LEVEL[f.severity],
        "message": {"text": f"{f.message} Fix: {f.fix}"},
        "partialFingerprints": {FINGERPRINT_KEY: f.fingerprint},
        "properties": {
            "classification": f.classification.value,
            "layer": f.layer or "",
            "subject": f.subject,
            "waiverExpired": report.is_expired(f),
            "nodes": list(f.nodes),
        },
    }
    if f.nodes:  # the map nodes the drift is about, by their ids
        result["logicalLocations"] = [{"fullyQualifiedName": n, "kind": "node"} for n in f.nodes]
    if f.rule in index:
        result["ruleIndex"] = index[f.rule]
    if f.primary is not None:
        result["locations"] = [{"physicalLocation": _physical(f.primary)}]
    if f.code is not None and f.map_loc is not None:
        result["relatedLocations"] = [
            {
                "id": 1,
                "physicalLocation": _physical(f.map_loc),
                "message": {"text": "what the map says"},
            }
        ]
    if waived:
        result["suppressions"] = [
            {"kind": "external", "justification": "accepted in the stackmap baseline"}
        ]
    return result


def render(report: Report) -> str:
    rules = [
        {
            "id": r.id,
            "name": r.name,
            "shortDescription": {"text": r.summary},
            "fullDescription": {"text": f"{r.summary} Classification policy: {r.policy.value}."},
            "help": {"text": r.fix, "markdown": f"{r.fix}\n\nSee `{RULES_DOC}#{r.id.lower()}`."},
            "defaultConfiguration": {"level": _LEVEL[r.severity]},
            "properties": {"classificationPolicy": r.policy.value, "tags": ["stackmap"]},
        }
        for r in report.rules
    ]
    index = {r.id: i for i, r in enumerate(report.rules)}
    results = [_result(f, index, report, False) for f in report.findings]
    results += [_result(f, index, report, True) for f in report.waived]
    log = {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "stackmap",
                        "version": __version__,
                        "informationUri": "https://github.com/stackmap/stackmap",
                        "rules": rules,
                    }
                },
                "automationDetails": {"id": "stackmap-check/"},
                "invocations": [{"executionSuccessful": True}],
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2, sort_keys=True) + "\n"
