"""``stackmap check`` and ``stackmap diff``: map-versus-code consistency and interface changes.

Exit status of ``check``: 0 when the map and the code agree (no active finding at or above
``--fail-on``), 1 when they do not, 2 when the check could not run. ``diff`` exits 0, or 1
with ``--fail-on-breaking`` when a breaking change is found, 2 on errors.
"""

from __future__ import annotations

import datetime as dt
import sys
from collections.abc import Sequence
from pathlib import Path

import typer

from mapper.check import baseline as baseline_mod
from mapper.check.baseline import Waiver
from mapper.check.finding import Finding, Severity
from mapper.check.formats import names as format_names
from mapper.check.formats import render
from mapper.check.formats.text import summary_line
from mapper.check.runner import run_check
from mapper.cli._common import emit_json, fail, writable_output
from mapper.errors import MapperError


def register(app: typer.Typer) -> None:
    app.command("check")(check)
    app.command("diff")(diff)


def check(
    root: Path = typer.Argument(Path("."), help="Repository root."),
    fmt: str = typer.Option(
        "text", "--format", "-f", help="text | json | markdown | sarif | junit"
    ),
    output: Path | None = typer.Option(None, "--output", "-o", help="Write the report here."),
    fail_on: Severity = typer.Option(
        Severity.NOTE, "--fail-on", help="Exit 1 on an active finding at or above this severity."
    ),
    baseline: Path | None = typer.Option(
        None, "--baseline", help=f"Accepted findings (default: ROOT/{baseline_mod.DEFAULT_NAME})."
    ),
    update_baseline: bool = typer.Option(
        False, "--update-baseline", help="Accept every current finding into the baseline."
    ),
    owner: str | None = typer.Option(None, "--owner", help="Owner of new waivers."),
    expires: str | None = typer.Option(
        None, "--expires", help="Expiry of new waivers (YYYY-MM-DD)."
    ),
    rules: list[str] = typer.Option([], "--rule", "-r", help="Run only these rules (id or name)."),
    as_json: bool = typer.Option(False, "--json", help="Same as --format json."),
    no_history: bool = typer.Option(
        False, "--no-history", help="Skip git classification (everything 'unknown' or by policy)."
    ),
) -> None:
    """Compare the map (contracts, docs, scenarios, layers) with the code and report drift.

    Examples: `stackmap check`, `stackmap check --format sarif -o check.sarif`,
    `stackmap check --rule SM102 --rule layer-upward --fail-on error`.
    """
    fmt = "json" if as_json else fmt
    try:
        if output is not None:
            default_baseline = root / baseline_mod.DEFAULT_NAME
            writable_output(output, *(p for p in (baseline, default_baseline) if p is not None))
        if fmt not in format_names():
            raise MapperError(f"unknown format {fmt!r}; known: {', '.join(format_names())}")
        report = run_check(root, rules=rules, history=not no_history)
        path = baseline or Path(report.root) / baseline_mod.DEFAULT_NAME
        waivers = baseline_mod.load(path)
        if update_baseline:
            _update(path, waivers, report.findings, owner, expires)
            return
        report = baseline_mod.apply(report, waivers)
        text = render(report, fmt)
    except MapperError as err:
        fail(err, as_json=fmt == "json")
    for warning in report.warnings:
        typer.echo(f"warning: {warning}", err=True)
    if output is not None:
        output.write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    if output is not None or fmt != "text":  # the text report on stdout ends with the summary
        typer.echo(f"stackmap check: {summary_line(report)} in {report.duration_s:.2f} s", err=True)
    raise typer.Exit(report.exit_code(fail_on))


def _update(
    path: Path,
    waivers: Sequence[Waiver],
    findings: Sequence[Finding],
    owner: str | None,
    expires: str | None,
) -> None:
    if not owner or not expires:
        raise MapperError("--update-baseline needs --owner and --expires YYYY-MM-DD")
    try:
        until = dt.date.fromisoformat(expires)
    except ValueError:
        raise MapperError(f"--expires must be YYYY-MM-DD, got {expires!r}") from None
    new = baseline_mod.updated(waivers, findings, owner=owner, expires=until)
    baseline_mod.save(path, new)
    typer.echo(f"baseline {path}: {len(new)} waiver(s)", err=True)


def diff(
    rev_a: str = typer.Argument(..., help="The older revision (tag, branch, commit)."),
    rev_b: str = typer.Argument("HEAD", help="The newer revision."),
    root: Path = typer.Option(Path("."), "--root", help="Repository root."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    fail_on_breaking: bool = typer.Option(
        False, "--fail-on-breaking", help="Exit 1 when a breaking change is found."
    ),
) -> None:
    """List interface changes between two revisions, classified breaking or compatible.

    Examples: `stackmap diff HEAD~5 HEAD`, `stackmap diff main HEAD --json --fail-on-breaking`.
    """
    from mapper.versions import Impact, diff_revisions

    try:
        changes = diff_revisions(root, rev_a, rev_b)
    except MapperError as err:
        fail(err, as_json=as_json)
    breaking = [c for c in changes if c.impact is Impact.BREAKING]
    if as_json:
        emit_json(
            {
                "from": rev_a,
                "to": rev_b,
                "breaking": len(breaking),
                "compatible": len(changes) - len(breaking),
                "changes": [c.to_dict() for c in changes],
            }
        )
    else:
        for change in changes:
            typer.echo(f"{change.impact.value:10} {change.location}: {change.message}")
        typer.echo(f"{len(breaking)} breaking, {len(changes) - len(breaking)} compatible")
    raise typer.Exit(1 if breaking and fail_on_breaking else 0)
