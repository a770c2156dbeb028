"""``stackmap impact``: what a change affects, why (hop by hop), what to rerun and update.

Exit status: 0 on success; 1 with ``--fail-on-unmatched-breaking`` when a breaking interface
change comes without a change to its contract or doc; 2 when the analysis could not run
(unknown node, a line inside no definition, an unknown revision, a diff touching only docs,
a malformed or oversized patch).
"""

from __future__ import annotations

from pathlib import Path

import typer

from mapper.cli._common import emit_json, fail
from mapper.cli.bench_cmd import bench_app
from mapper.cli.eval_cmd import eval_app
from mapper.errors import MapperError


def register(app: typer.Typer) -> None:
    app.command("impact")(impact)


def impact(
    target: str | None = typer.Argument(
        None, help="A node id, PATH:LINE, a contract entry (umd_kmd.free) or a qualname."
    ),
    root: Path = typer.Option(Path("."), "--root", "-C", help="Repository root."),
    diff: str | None = typer.Option(None, "--diff", help="REV or REV..REV: impact of a diff."),
    worktree: bool = typer.Option(False, "--worktree", help="Impact of uncommitted changes."),
    patch: str | None = typer.Option(
        None,
        "--patch",
        metavar="FILE|-",
        help="A patch file (or - for stdin), e.g. `git diff` output: impact of applying it.",
    ),
    conservative: bool = typer.Option(
        False,
        "--conservative/--precise",
        help="Follow every plausible edge (imports, doc mentions, similarity) instead of "
        "code evidence only.",
    ),
    depth: int | None = typer.Option(
        None, "--depth", min=0, max=1000, help="Caller levels to follow."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    fmt: str = typer.Option("text", "--format", help="text or markdown."),
    fail_on_unmatched: bool = typer.Option(
        False,
        "--fail-on-unmatched-breaking",
        help="Exit 1 when a breaking change comes without its contract or doc change.",
    ),
) -> None:
    """Impact of changing a node, a line, a contract entry, a revision range or the worktree.

    Examples: `stackmap impact interface:umd_kmd.free`, `stackmap impact stack/kmd/memory.py:120
    --conservative`, `stackmap impact --diff main..HEAD --format markdown`,
    `git diff | stackmap impact --patch -`.
    """
    from mapper.impact import Mode, impact_of, impact_of_diff, impact_of_patch, open_view
    from mapper.impact.analyse import unmatched_breaking
    from mapper.impact.render import render_markdown, render_text

    named = sum(x is not None for x in (target, diff, worktree or None, patch))
    if named != 1:
        fail(
            "give exactly one of TARGET, --diff REV[..REV], --worktree or --patch FILE|-",
            as_json=as_json,
        )
    if fmt not in ("text", "markdown"):
        fail(f"unknown format {fmt!r}; known: markdown, text", as_json=as_json)
    mode = Mode.CONSERVATIVE if conservative else Mode.PRECISE
    try:
        view = open_view(root)
        if target is not None:
            report = impact_of(view, root, target, mode=mode, depth=depth)
            paths: tuple[str, ...] = ()
        elif patch is not None:
            report = impact_of_patch(view, root, _read_patch(patch), mode=mode, depth=depth)
            paths = report.diff_paths
        else:
            report = impact_of_diff(view, root, diff, mode=mode, depth=depth)
            paths = report.diff_paths
    except MapperError as exc:
        fail(exc, as_json=as_json)
    gaps = unmatched_breaking(report, paths) if paths else []
    if as_json:
        emit_json({**report.to_json(), "unmatched_breaking": gaps})
    elif fmt == "markdown":
        typer.echo(render_markdown(report, gaps), nl=False)
    else:
        typer.echo(render_text(report), nl=False)
        for gap in gaps:
            typer.echo(f"warning: {gap}", err=True)
    raise typer.Exit(1 if gaps and fail_on_unmatched else 0)


def _read_patch(source: str) -> str:
    """The patch text of FILE or stdin (``-``), read up to one byte past the size cap so an
    oversized patch is refused by :func:`~mapper.impact.parse_patch` without reading it all."""
    import sys

    from mapper.impact import PatchLimits

    cap = PatchLimits().max_bytes + 1
    if source == "-":
        data = sys.stdin.buffer.read(cap)
    else:
        with open(source, "rb") as handle:
            data = handle.read(cap)
    return data.decode("utf-8", "replace")


@eval_app.command("impact")
def eval_impact(
    repo: Path = typer.Argument(Path("."), help="A git repository with a stackmap.toml."),
    commits: int = typer.Option(
        20, "--commits", min=1, max=10_000, help="Most cases (signature changes) to score."
    ),
    rev: str = typer.Option("HEAD", "--rev", help="Mine the history of this revision."),
    config: Path | None = typer.Option(
        None, "--config", help="A stackmap.toml for revisions without one (default: REPO's)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Impact's recall and precision on commits that change a signature and its call sites,
    beside the name-matching and reverse-import baselines measured in the same run."""
    from mapper.config import load_config
    from mapper.impact.evaluate import METHODS, TRUTHS, evaluate

    try:
        base = None
        if config is not None:
            from dataclasses import replace

            base = replace(load_config(config.parent), root=repo.resolve())
        result = evaluate(repo, max(1, commits), config=base, rev=rev)
    except MapperError as exc:
        fail(exc, as_json=as_json)
    if as_json:
        emit_json(result)
        return
    typer.echo(f"{result['cases']} case(s) in {result['seconds']} s")
    for truth in TRUTHS:  # "by_change" beside them is in the JSON
        for method in METHODS:
            micro = result["overall"][truth][method]["micro"]
            typer.echo(
                f"  truth={truth:10} {method:12} recall {micro['recall']:.2f}  "
                f"precision {micro['precision']:.2f}"
            )


@bench_app.command("impact")
def bench_impact(
    root: Path = typer.Argument(Path("."), help="Repository root (with an ingested map)."),
    repeat: int = typer.Option(5, "--repeat", min=1, max=1000, help="Runs per figure."),
    files: int = typer.Option(
        10, "--files", min=1, max=100_000, help="Code files the timed diff touches at least."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Impact latency on the warm map: one interface (p50/p95) and a diff of ~10 files."""
    from mapper.impact.bench import bench_impact as run

    try:
        result = run(root, repeat=max(1, repeat), files=max(1, files))
    except MapperError as exc:
        fail(exc, as_json=as_json)
    if as_json:
        emit_json(result)
        return
    for key, value in result.items():
        typer.echo(f"{key}: {value}")
