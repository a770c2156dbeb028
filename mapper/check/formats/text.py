"""Plain text for people, grouped by layer in stack order (the default format)."""

from __future__ import annotations

from mapper.check.finding import Finding
from mapper.check.report import Report


def summary_line(report: Report) -> str:
    counts = report.counts()
    total = len(report.findings)
    noun = "finding" if total == 1 else "findings"
    parts = ", ".join(f"{n} {sev}" for sev, n in counts.items())
    extra = f"; {len(report.waived)} waived" if report.waived else ""
    if report.expired:
        extra += f"; {len(report.expired)} expired waiver(s)"
    return f"{total} {noun} ({parts}){extra}"


def _one(f: Finding, report: Report) -> list[str]:
    info = report.rule(f.rule)
    name = f" {info.name}" if info else ""
    where = str(f.primary) if f.primary else "-"
    lines = [f"  {where}: {f.severity.value} {f.rule}{name} [{f.classification.value}]"]
    lines.append(f"      {f.message}")
    if f.nodes:
        lines.append(f"      nodes: {', '.join(f.nodes)}")
    if f.code and f.map_loc:
        lines.append(f"      map: {f.map_loc}")
    if report.is_expired(f):
        lines.append("      waiver expired: the baseline no longer accepts this finding")
    lines.append(f"      fix: {f.fix}")
    return lines


def render(report: Report) -> str:
    out = [f"stackmap check: {summary_line(report)}"]
    for layer, findings in report.by_layer():
        out.append("")
        out.append(f"{layer}:")
        for f in findings:
            out.extend(_one(f, report))
    if report.unused_waivers:
        out.append("")
        out.append("baseline entries that match nothing (drift fixed; remove them):")
        out.extend(f"  {fp}" for fp in report.unused_waivers)
    return "\n".join(out) + "\n"
