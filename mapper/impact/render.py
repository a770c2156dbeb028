"""An :class:`~mapper.impact.records.ImpactReport` for people: plain text or Markdown (a
pull-request comment). JSON comes from ``report.to_json()``; all three read the same record."""

from __future__ import annotations

from mapper.impact.records import Affected, Category, ImpactReport

_SECTIONS = (
    ("Tests to rerun", (Category.TEST, Category.RERUN)),
    ("Contracts to update", (Category.CONTRACT,)),
    ("Docs to update", (Category.DOC,)),
    ("Scenario steps to re-walk", (Category.SCENARIO_STEP,)),
)
LIMIT = 25  # items per section in the human formats (JSON carries them all)


def _where(item: Affected) -> str:
    if not item.path:
        return "-"
    return f"{item.path}:{item.line}" if item.line else item.path


def _why(item: Affected) -> str:
    return " ; ".join(
        f"{h.edge}{'→' if h.forward else '←'} {h.cite()} ({h.evidence.value})" for h in item.why
    )


def render_text(report: ImpactReport) -> str:
    lines = [f"impact of {report.target} ({report.mode.value})", "", "changed:"]
    for c in report.changed:
        where = f"{c.path}:{c.line}" if c.path and c.line else (c.path or "-")
        lines.append(f"  {c.impact:12} {c.node or c.name}  {where}")
        lines.extend(f"               {m}" for m in c.messages)
    for layer, items in report.by_layer().items():
        lines.append(f"\n{layer}:")
        for item in items[:LIMIT]:
            lines.append(
                f"  {item.category.value:14} {item.node}  {_where(item)}"
                f"  [{item.weakest.value} {item.certainty:.2f}]"
            )
            for hop in item.why:
                lines.append(f"      {hop.render()}")
    for title, cats in _SECTIONS:
        items = report.of(*cats)
        if items:
            lines.append(f"\n{title.lower()}:")
            lines.extend(f"  {i.node}  {_where(i)}  via {_why(i)}" for i in items[:LIMIT])
    e = report.effort
    lines.append(
        f"\neffort: {len(e.layers)} layer(s) {', '.join(e.layers) or '-'}; {e.files} file(s) "
        f"({e.code_files} code); {e.tests} test(s); {e.docs} doc/contract item(s); "
        f"roles {', '.join(e.roles) or '-'}"
    )
    return "\n".join(lines) + "\n"


def render_markdown(report: ImpactReport, gaps: list[str] | None = None) -> str:
    e = report.effort
    out = [
        f"## Impact of `{report.target}` ({report.mode.value})",
        "",
        f"**{len(report.breaking)} breaking** interface change(s), {len(report.changed)} changed "
        f"definition(s); {e.files} file(s) in {len(e.layers)} layer(s) "
        f"({', '.join(e.layers) or '-'}); roles: {', '.join(e.roles) or '-'}.",
        "",
    ]
    if gaps:
        out += ["> [!WARNING]", *[f"> {g}" for g in gaps], ""]
    out += ["### Changed", "", "| impact | definition | where | how |", "|---|---|---|---|"]
    for c in report.changed:
        where = f"{c.path}:{c.line}" if c.path and c.line else (c.path or "-")
        how = "; ".join(c.messages) or "-"
        out.append(f"| {c.impact} | `{c.node or c.name}` | `{where}` | {how} |")
    for layer, items in report.by_layer().items():
        out += ["", f"### {layer}", "", "| item | where | evidence | why |", "|---|---|---|---|"]
        for item in items[:LIMIT]:
            out.append(
                f"| `{item.node}` ({item.category.value}) | `{_where(item)}` | "
                f"{item.weakest.value} {item.certainty:.2f} | {_why(item)} |"
            )
        if len(items) > LIMIT:
            out.append(f"| … {len(items) - LIMIT} more | | | |")
    for title, cats in _SECTIONS:
        items = report.of(*cats)
        if not items:
            continue
        out += ["", f"### {title}", ""]
        out += [f"- `{i.node}` — `{_where(i)}` ({i.weakest.value})" for i in items[:LIMIT]]
        if len(items) > LIMIT:
            out.append(f"- … {len(items) - LIMIT} more")
    out += ["", "### Files, most certain first", ""]
    out += [
        f"{n}. `{f.path}` — {', '.join(f.categories)} ({f.weakest.value})"
        for n, f in enumerate(report.files[:LIMIT], 1)
    ]
    return "\n".join(out) + "\n"
