"""``stackmap scenario``: walks derived from the map (new op, call trace), each with ``--json``."""

from __future__ import annotations

from pathlib import Path

import typer

from mapper.cli._common import emit_json, fail
from mapper.cli.eval_cmd import eval_app
from mapper.errors import MapperError

scenario_app = typer.Typer(help="Scenario walks derived from the map.", no_args_is_help=True)
ROOT = typer.Option(Path("."), "--root", "-C", help="Repository root.")
JSON = typer.Option(False, "--json", help="Print JSON.")


def register(app: typer.Typer) -> None:
    app.add_typer(scenario_app, name="scenario")


@scenario_app.command("new-op")
def new_op(
    name: str = typer.Argument(..., help="The new op, e.g. gelu."),
    like: str | None = typer.Option(None, "--like", help="Model it on this existing op."),
    root: Path = ROOT,
    as_json: bool = JSON,
) -> None:
    """Per layer, where a new op must go: vocabularies, implementations, registrations, uses,
    tests and docs, modelled on the footprint of the most similar existing op."""
    from mapper.impact import open_view
    from mapper.scenarios.newop import walk_new_op

    try:
        walk = walk_new_op(open_view(root), name, like)
    except MapperError as exc:
        fail(exc, as_json=as_json)
    if as_json:
        emit_json(walk.to_json())
        return
    sims = ", ".join(f"{c} {s:.2f}" for c, s in walk.candidates[:3])
    typer.echo(f"new op {walk.op}, modelled on {walk.like} (similar: {sims})")
    if walk.weak:
        typer.echo(
            f"weak match: no known op is much like {walk.op}; pass --like OP to model it on "
            "the op you mean",
            err=True,
        )
    for plan in walk.layers:
        typer.echo(f"\n{plan.layer}:")
        if plan.no_change:
            typer.echo(f"  {plan.no_change}")
        for p in plan.points:
            typer.echo(f"  {p.kind.value:14} {p.path}:{p.line}  {p.action}  → {p.predicted}")
    if walk.outside:
        typer.echo("\ntests, docs and contracts:")
        for p in walk.outside:
            typer.echo(f"  {p.kind.value:14} {p.path}:{p.line}  {p.action}")


@scenario_app.command("trace")
def trace(
    entry: str = typer.Argument(..., help="A node id or qualname to start from."),
    root: Path = ROOT,
    depth: int = typer.Option(12, "--depth", min=1, max=1000, help="Most calls to follow down."),
    as_json: bool = JSON,
) -> None:
    """The call path from ENTRY down the layers and back up, with the holes where the map
    cannot follow it and the material that is missing there."""
    from mapper.impact import open_view
    from mapper.scenarios.trace import walk_trace

    try:
        walk = walk_trace(open_view(root), entry, depth=depth)
    except MapperError as exc:
        fail(exc, as_json=as_json)
    if as_json:
        emit_json(walk.to_json())
        return
    typer.echo(f"trace of {walk.entry}: {' → '.join(walk.layers_reached) or '-'}")
    for step in walk.steps:
        typer.echo(f"  {'  ' * step.depth}{step.layer or '-':9} {step.node}  {step.cite}")
    for branch in walk.branches:
        typer.echo(f"  also {branch.layer}: {branch.node}  {branch.cite} (a call off the path)")
    for hole in walk.holes:
        typer.echo(f"  HOLE {hole.layer}: {hole.reason}")
    typer.echo("back (completion):")
    for back in walk.back:
        by = "" if back.how == "call" else " (matched by name)"
        typer.echo(
            f"  {back.layer:9} {back.upper} ← {back.lower} via {back.interface}  {back.at}{by}"
        )
    for layer, why in walk.back_holes:
        typer.echo(f"  HOLE {layer}: {why}")


@eval_app.command("new-op")
def eval_new_op(
    target: str = typer.Argument(
        ..., help="A saved `scenario new-op --json` file; with --at, the op's name."
    ),
    diff: str | None = typer.Option(
        None, "--diff", help="REV..REV: the change that added the op (default with --at: REV)."
    ),
    at: str | None = typer.Option(
        None, "--at", help="Predict now, on a clean checkout of REV's parent, and score on REV."
    ),
    like: str | None = typer.Option(None, "--like", help="With --at: model it on this op."),
    root: Path = ROOT,
    as_json: bool = JSON,
) -> None:
    """Recall and precision of a new-op prediction against the change that made the op: a
    saved prediction, or (--at) the current predictor run blind on the revision before."""
    import json
    import sys

    from mapper.scenarios.newop_at import predict_at
    from mapper.scenarios.newop_eval import compare_prediction

    if at is None and diff is None:
        fail(
            "give --diff REV..REV with a saved prediction, or --at REV with an op name",
            as_json=as_json,
        )
    try:
        if at is not None:
            result = predict_at(
                root,
                target,
                at,
                like=like,
                revisions=diff,
                progress=lambda x: print(x, file=sys.stderr),
            )
        else:
            try:
                saved = json.loads(Path(target).read_text(encoding="utf-8"))
            except (OSError, ValueError) as exc:
                fail(f"cannot read the prediction {target}: {exc}", as_json=as_json)
            result = compare_prediction(saved, root, diff or "")
    except MapperError as exc:
        fail(exc, as_json=as_json)
    if as_json:
        emit_json(result)
        return
    for what in ("files", "existing_files", "symbols", "code_symbols", "new_symbols"):
        s = result[what]
        typer.echo(f"{what}: recall {s['recall']:.2f} precision {s['precision']:.2f}")
        typer.echo(f"  missed: {', '.join(s['missed']) or '-'}")
        typer.echo(f"  extra:  {', '.join(s['extra']) or '-'}")


@scenario_app.command("errors")
def errors(
    fault: str | None = typer.Argument(None, help="Only fault classes whose name contains this."),
    root: Path = ROOT,
    as_json: bool = JSON,
) -> None:
    """Per fault class: who detects, reports, cleans up and retries; holes where nobody does."""
    from mapper.impact import open_view
    from mapper.scenarios.errors import walk_errors

    try:
        walks = walk_errors(open_view(root), fault)
    except MapperError as exc:
        fail(exc, as_json=as_json)
    if not walks:
        fail(f"no fault class matches {fault!r}", as_json=as_json)
    if as_json:
        emit_json([w.to_json() for w in walks])
        return
    for w in walks:
        typer.echo(f"{w.layer:9} {w.fault}")
        for role, found in (
            ("detects", w.detects),
            ("reports", w.reports),
            ("cleans up", w.cleans_up),
            ("retries", w.retries),
        ):
            names = ", ".join(f"{r.node} ({r.at})" for r in found[:4]) or "-"
            typer.echo(f"    {role:9} {names}")
        for hole in w.holes:
            typer.echo(f"    HOLE: {hole}")


@scenario_app.command("perf")
def perf(
    model: str | None = typer.Argument(
        None, help="An ONNX model file or a built-in of `refstack bench model` (cnn, mlp, …)."
    ),
    root: Path = ROOT,
    runs: int = typer.Option(
        5, "--runs", min=1, max=1000, help="Timed runs of the profiled benchmark."
    ),
    as_json: bool = JSON,
) -> None:
    """Per layer, the performance checklist with code locations; given a model, the self time
    per layer measured from a profiled run of the reference stack (a subprocess)."""
    from mapper.impact import open_view
    from mapper.scenarios.perf import walk_perf

    try:
        walk = walk_perf(open_view(root), model, runs=max(1, runs))
    except MapperError as exc:
        fail(exc, as_json=as_json)
    if as_json:
        emit_json(walk.to_json())
        return
    for layer in walk.layers:
        took = f"  {layer.seconds * 1000:.1f} ms self time" if layer.seconds is not None else ""
        typer.echo(f"{layer.layer}:{took}")
        for item, spots in layer.checklist:
            where = ", ".join(s.to_json()["at"] for s in spots[:4]) or "-"
            typer.echo(f"    {item:24} {where}")
        for at, seconds in layer.hottest[:3]:
            typer.echo(f"    hot: {at} {seconds * 1000:.2f} ms")
    if walk.outside_seconds is not None:
        typer.echo(f"outside the layers: {walk.outside_seconds * 1000:.1f} ms")


@scenario_app.command("check")
def check_pages(root: Path = ROOT, as_json: bool = JSON) -> None:
    """The scenario pages against the code: a step the code no longer supports is a finding
    (exit 1 when there is one)."""
    from mapper.impact import open_view
    from mapper.scenarios.pages import check_pages as run

    try:
        findings = run(open_view(root))
    except MapperError as exc:
        fail(exc, as_json=as_json)
    if as_json:
        emit_json([f.to_json() for f in findings])
    else:
        for f in findings:
            typer.echo(f"{f.path}:{f.line}: {f.rule}: {f.message}")
        typer.echo(f"{len(findings)} finding(s)")
    raise typer.Exit(1 if findings else 0)
