"""``refstack pipeline check|run``: operator pipeline configs through runtime → UMD → KMD."""

from __future__ import annotations

from pathlib import Path

import typer

from stack.cli._common import emit_json, fail
from stack.cli.run_cmd import echo_outputs, read_inputs, save_outputs
from stack.errors import StackError
from stack.runtime import Runtime
from stack.runtime.oppipeline import check_pipeline, load_config
from stack.umd import Umd

app = typer.Typer(
    help="Operator pipelines: validate and link a config, or run it.", no_args_is_help=True
)

_BACKEND = typer.Option(None, "--backend", help="numpy | cupy (default: auto).")
_JSON = typer.Option(False, "--json", help="Print the result as JSON.")


@app.command("check")
def check(
    config: Path = typer.Argument(..., help="A pipeline config (.json, .yaml)."),
    backend: str | None = _BACKEND,
    as_json: bool = _JSON,
) -> None:
    """Validate CONFIG against the pipeline schema and link it: operators, precision policies
    on this device, every shape. Exit 2 with one line naming the offending field otherwise."""
    try:
        cfg = load_config(config)
        with Umd(backend) as umd:
            linked = check_pipeline(cfg, umd)
    except StackError as err:
        fail(err, as_json=as_json)
    summary = linked.summary()
    if as_json:
        emit_json(summary)
        return
    for t in summary["tensors"]:
        shape = "x".join(str(d) for d in t["shape"]) or "scalar"
        holders = ", ".join(t["consumers"]) or "-"
        kind = f"  [{t['connection']}]" if t["connection"] else ""
        typer.echo(
            f"{t['name']}\t{shape}\t{t['dtype']}\t{t['producer'] or '(input)'} -> {holders}{kind}"
        )
    typer.echo(
        f"# {summary['name']}: {len(summary['stages'])} stages, "
        f"{len(summary['tensors'])} tensors on {summary['device']}: ok"
    )


@app.command("run")
def run(
    config: Path = typer.Argument(..., help="A pipeline config (.json, .yaml)."),
    inputs: list[str] = typer.Option([], "--input", help="NAME=FILE.npy, once per input."),
    output_dir: Path = typer.Option(Path("out"), "--output-dir", help="Where outputs go."),
    backend: str | None = _BACKEND,
    timeout_s: float = typer.Option(
        60.0, "--timeout", min=0.001, max=86_400, help="Seconds one stage may take."
    ),
    as_json: bool = _JSON,
) -> None:
    """Run CONFIG once through runtime → UMD → KMD; each output goes to DIR/<name>.npy."""
    try:
        arrays = read_inputs(inputs)
        cfg = load_config(config)
        with Runtime(backend) as runtime:
            runner = runtime.open_pipeline(cfg)
            try:
                result = runner.run(arrays, timeout_s=timeout_s)
            finally:
                runner.close()
    except StackError as err:
        fail(err, as_json=as_json)
    records = save_outputs(result.outputs, output_dir, as_json=as_json)
    report = result.report
    names = [o.stage for o in report.stages]
    overlapping = [
        (a, b) for i, a in enumerate(names) for b in names[i + 1 :] if report.overlapped(a, b)
    ]
    summary = {
        "pipeline": cfg.name,
        "outputs": records,
        "stages": [
            {"stage": o.stage, "operator": o.operator, "status": o.status, "error": o.error}
            for o in report.stages
        ],
        "fallbacks": report.fallbacks,
        "pool": report.pool.to_dict(),
        "timeline": [
            {"stage": e.stage, "mark": e.mark.value, "seq": e.seq} for e in report.timeline
        ],
        "overlapped": [[a, b] for a, b in overlapping],
    }
    if as_json:
        emit_json(summary)
        return
    echo_outputs(records)
    pool = report.pool
    typer.echo(
        f"# {len(report.stages)} stages, {report.fallbacks} fallbacks, pool peak "
        f"{pool.peak_bytes} B, allocated {pool.allocated_bytes} B, bin hits {pool.hits}"
    )
    if overlapping:
        pairs = ", ".join(f"{a} with {b}" for a, b in overlapping)
        typer.echo(f"# ran at once: {pairs}")
