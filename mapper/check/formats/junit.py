"""JUnit XML for CI test reporters: one suite per rule, one failing case per finding.

A rule without findings is one passing case; a waived finding is a skipped case.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from mapper.check.finding import Finding
from mapper.check.report import Report


def _case(suite: ET.Element, f: Finding, report: Report, waived: bool) -> None:
    where = str(f.primary) if f.primary else f.subject
    case = ET.SubElement(suite, "testcase", classname=f"stackmap.{f.rule}", name=where)
    if waived:
        ET.SubElement(case, "skipped", message="waived by the baseline")
        return
    kind = "expired waiver" if report.is_expired(f) else f.classification.value
    failure = ET.SubElement(case, "failure", message=f.message, type=f"{f.severity.value}/{kind}")
    nodes = ", ".join(f.nodes) or "-"
    lines = [f.message, f"code: {f.code or '-'}", f"map: {f.map_loc or '-'}", f"nodes: {nodes}"]
    lines.append(f"fix: {f.fix}")
    failure.text = "\n".join(lines)


def render(report: Report) -> str:
    root = ET.Element("testsuites", name="stackmap check")
    total = failures = skipped = 0
    for rule in report.rules:
        active = [f for f in report.findings if f.rule == rule.id]
        waived = [f for f in report.waived if f.rule == rule.id]
        suite = ET.SubElement(root, "testsuite", name=f"{rule.id} {rule.name}")
        for f in sorted(active, key=Finding.sort_key):
            _case(suite, f, report, False)
        for f in sorted(waived, key=Finding.sort_key):
            _case(suite, f, report, True)
        if not active and not waived:
            ET.SubElement(suite, "testcase", classname=f"stackmap.{rule.id}", name="no drift")
        n = max(1, len(active) + len(waived))
        suite.set("tests", str(n))
        suite.set("failures", str(len(active)))
        suite.set("errors", "0")
        suite.set("skipped", str(len(waived)))
        total, failures, skipped = total + n, failures + len(active), skipped + len(waived)
    root.set("tests", str(total))
    root.set("failures", str(failures))
    root.set("errors", "0")
    root.set("skipped", str(skipped))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"
