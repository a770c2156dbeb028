"""Golden files for every output format, and SARIF against the 2.1.0 schema's required fields.

Regenerate the golden files after an intended change with ``STACKMAP_REGEN_GOLDEN=1``.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import xml.etree.ElementTree as ET
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest

from mapper.check import Report, run_check
from mapper.check.baseline import Waiver, apply
from mapper.check.formats import names, render

GOLDEN = Path(__file__).parents[1] / "fixtures" / "check" / "golden"
TODAY = dt.date(2026, 6, 1)
SUFFIX = {"text": "txt", "json": "json", "markdown": "md", "sarif": "sarif", "junit": "xml"}

# The required fields (and enumerations) of the SARIF 2.1.0 schema (sarif-schema-2.1.0.json)
# for the objects this tool emits.
SARIF_REQUIRED = {
    "type": "object",
    "required": ["version", "runs"],
    "properties": {
        "version": {"enum": ["2.1.0"]},
        "runs": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["tool"],
                "properties": {
                    "tool": {
                        "type": "object",
                        "required": ["driver"],
                        "properties": {
                            "driver": {
                                "type": "object",
                                "required": ["name"],
                                "properties": {
                                    "rules": {
                                        "type": "array",
                                        "items": {"type": "object", "required": ["id"]},
                                    }
                                },
                            }
                        },
                    },
                    "invocations": {
                        "type": "array",
                        "items": {"type": "object", "required": ["executionSuccessful"]},
                    },
                    "results": {"type": "array", "items": {"$ref": "#/$defs/result"}},
                },
            },
        },
    },
    "$defs": {
        "message": {
            "type": "object",
            "anyOf": [{"required": ["text"]}, {"required": ["id"]}],
        },
        "physicalLocation": {
            "type": "object",
            "properties": {
                "artifactLocation": {
                    "type": "object",
                    "properties": {"uri": {"type": "string"}},
                },
                "region": {
                    "type": "object",
                    "properties": {"startLine": {"type": "integer", "minimum": 1}},
                },
            },
        },
        "location": {
            "type": "object",
            "properties": {
                "physicalLocation": {"$ref": "#/$defs/physicalLocation"},
                "message": {"$ref": "#/$defs/message"},
            },
        },
        "result": {
            "type": "object",
            "required": ["message"],
            "properties": {
                "message": {"$ref": "#/$defs/message"},
                "level": {"enum": ["none", "note", "warning", "error"]},
                "ruleIndex": {"type": "integer", "minimum": -1},
                "locations": {"type": "array", "items": {"$ref": "#/$defs/location"}},
                "relatedLocations": {"type": "array", "items": {"$ref": "#/$defs/location"}},
                "partialFingerprints": {
                    "type": "object",
                    "additionalProperties": {"type": "string"},
                },
                "suppressions": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "required": ["kind"],
                        "properties": {"kind": {"enum": ["inSource", "external"]}},
                    },
                },
            },
        },
    },
}


def _edit(root: Path, path: str, old: str, new: str) -> None:
    file = root / path
    text = file.read_text(encoding="utf-8")
    assert old in text
    file.write_text(text.replace(old, new, 1), encoding="utf-8")


@pytest.fixture
def report(clean_repo: Path, commit: Callable[[Path, str], None]) -> Report:
    """Three drifts; one waived, one whose waiver expired, one new."""
    _edit(clean_repo, "fx/umd/session.py", "submit(self, blob: bytes", "submit(self, data: bytes")
    _edit(clean_repo, "fx/umd/session.py", "len(blob)", "len(data)")
    _edit(
        clean_repo,
        "fx/kmd/device.py",
        '"""Device memory."""\n',
        '"""Device memory."""\n\nfrom fx.umd.session import Session\n',
    )
    _edit(
        clean_repo,
        "contracts/umd_kmd.yaml",
        "      returns: None\n    sync: sync\n",
        "      returns: None\n",
    )
    commit(clean_repo, "three drifts")
    raw = run_check(clean_repo)
    by_rule = {f.rule: f for f in raw.findings}
    assert set(by_rule) == {"SM102", "SM202", "SM401"}
    waivers = [
        Waiver(
            by_rule["SM401"].fingerprint,
            "SM401",
            by_rule["SM401"].subject,
            "kmd-team",
            dt.date(2026, 12, 31),
            "semantics being written",
        ),
        Waiver(
            by_rule["SM202"].fingerprint,
            "SM202",
            by_rule["SM202"].subject,
            "kmd-team",
            dt.date(2026, 1, 31),
            "temporary",
        ),
        Waiver("0123456789abcdef", "SM101", "gone", "nobody", dt.date(2026, 12, 31)),
    ]
    return replace(apply(raw, waivers, today=TODAY), root=".", duration_s=0.0)


@pytest.mark.parametrize("fmt", sorted(SUFFIX))
def test_golden(report: Report, fmt: str) -> None:
    text = render(report, fmt)
    golden = GOLDEN / f"report.{SUFFIX[fmt]}"
    if os.environ.get("STACKMAP_REGEN_GOLDEN"):
        golden.write_text(text, encoding="utf-8")
    assert text == golden.read_text(encoding="utf-8")


def test_every_registered_format_has_a_golden_file() -> None:
    assert set(names()) == set(SUFFIX)


def test_sarif_validates_and_carries_fingerprints(report: Report) -> None:
    log = json.loads(render(report, "sarif"))
    jsonschema.validate(log, SARIF_REQUIRED)
    run = log["runs"][0]
    ids = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert ids == sorted(ids) and "SM102" in ids
    results = run["results"]
    fingerprints = [r["partialFingerprints"]["stackmapFinding/v1"] for r in results]
    assert len(set(fingerprints)) == len(results) == 3
    for r in results:
        assert ids[r["ruleIndex"]] == r["ruleId"]
    waived = [r for r in results if r.get("suppressions")]
    assert [r["ruleId"] for r in waived] == ["SM401"]


def test_sarif_fingerprint_survives_a_line_shift(report: Report) -> None:
    moved = replace(
        report,
        findings=tuple(
            replace(f, code=replace(f.code, line=(f.code.line or 0) + 7)) if f.code else f
            for f in report.findings
        ),
    )

    def prints(r: Report) -> list[str]:
        log = json.loads(render(r, "sarif"))
        return [x["partialFingerprints"]["stackmapFinding/v1"] for x in log["runs"][0]["results"]]

    assert prints(moved) == prints(report)
    assert render(moved, "sarif") != render(report, "sarif")


def test_junit_counts(report: Report) -> None:
    root = ET.fromstring(render(report, "junit"))
    assert root.get("failures") == "2"
    assert root.get("skipped") == "1"
    suites = {s.get("name").split()[0]: s for s in root}  # type: ignore[union-attr]
    assert suites["SM202"].get("failures") == "1"
    assert suites["SM101"].find("testcase").get("name") == "no drift"  # type: ignore[union-attr]


def test_json_summary_matches_findings(report: Report) -> None:
    doc = json.loads(render(report, "json"))
    assert doc["summary"]["findings"] == len(doc["findings"]) == 2
    assert doc["summary"]["waived"] == 1
    assert doc["unused_waivers"] == ["0123456789abcdef"]
    expired = [f for f in doc["findings"] if f["waiver_expired"]]
    assert [f["rule"] for f in expired] == ["SM202"]
