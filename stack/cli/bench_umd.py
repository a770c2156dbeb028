"""``refstack bench umd``: translation cost in process and over gRPC, against the floor."""

from __future__ import annotations

import typer

from stack.cli._common import emit_json


def register(app: typer.Typer) -> None:
    app.command("umd")(bench_umd)


def bench_umd(
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    n: int = typer.Option(1000, help="Timed calls per figure (medians are reported)."),
) -> None:
    """Translation cost in process and over gRPC, against the transport floor.

    Starts a UMD server in a child process on a free loopback port, measures, stops it.
    Figures are p50 microseconds; the seed's figures and the goal ratios are printed beside.
    """
    from stack.umd.benchmark import run

    report = run(n)
    if as_json:
        emit_json(report)
        return
    for key, value in report.items():
        if isinstance(value, dict):
            for sub, v in value.items():
                typer.echo(f"{key}.{sub:<34} {v}")
        else:
            typer.echo(f"{key:<40} {value}")
