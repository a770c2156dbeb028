"""Markdown for a CI job summary (``>> $GITHUB_STEP_SUMMARY``) or a pull-request comment."""

from __future__ import annotations

from mapper.check.formats.text import summary_line
from mapper.check.report import Report


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render(report: Report) -> str:
    status = "map and code agree" if not report.findings else summary_line(report)
    out = [f"## stackmap check: {status}", ""]
    counts = report.counts()
    out.append("| error | warning | note | waived | expired waivers |")
    out.append("| ---: | ---: | ---: | ---: | ---: |")
    out.append(
        f"| {counts['error']} | {counts['warning']} | {counts['note']} "
        f"| {len(report.waived)} | {len(report.expired)} |"
    )
    for layer, findings in report.by_layer():
        out += ["", f"### {layer}", ""]
        out.append("| rule | severity | code | map | nodes | class | finding | fix |")
        out.append("| --- | --- | --- | --- | --- | --- | --- | --- |")
        for f in findings:
            info = report.rule(f.rule)
            rule = f"`{f.rule}` {info.name}" if info else f"`{f.rule}`"
            code = f"`{f.code}`" if f.code else ""
            mloc = f"`{f.map_loc}`" if f.map_loc else ""
            expired = " (waiver expired)" if report.is_expired(f) else ""
            nodes = " ".join(f"`{n}`" for n in f.nodes)
            out.append(
                f"| {rule} | {f.severity.value} | {code} | {mloc} | {nodes} "
                f"| {f.classification.value} "
                f"| {_cell(f.message)}{expired} | {_cell(f.fix)} |"
            )
    if report.unused_waivers:
        out += ["", "Baseline entries matching nothing (remove them): "]
        out.append(", ".join(f"`{fp}`" for fp in report.unused_waivers))
    return "\n".join(out) + "\n"
