"""``refstack bench umd`` and ``refstack bench umd-hog``: the UMD service's figures."""

from __future__ import annotations

import typer

from stack.cli._common import emit_json, fail
from stack.errors import StackError


def register(app: typer.Typer) -> None:
    app.command("umd")(bench_umd)
    app.command("umd-hog")(bench_umd_hog)


def bench_umd(
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    n: int = typer.Option(
        1000, min=1, max=1_000_000, help="Timed calls per figure (medians are reported)."
    ),
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


def bench_umd_hog(
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    hog_calls: int = typer.Option(64, min=1, max=4096, help="WaitFence calls the hog fires."),
    clients: int = typer.Option(4, min=1, max=64, help="Well-behaved clients."),
    echoes: int = typer.Option(200, min=1, max=100_000, help="Echo calls per well-behaved client."),
) -> None:
    """Echo latency of well-behaved clients while one client hogs waits (loopback, bounded).

    Starts a UMD server in a child process; the same clients run first without the hog (the
    baseline). Goal: Echo p99 under the hog <= 50 ms, no well-behaved session lost.
    """
    from stack.umd.service.hog import run_hog
    from stack.umd.service.serve import child_server

    try:
        with child_server("--backend", "numpy") as target:
            report = run_hog(target, hog_calls=hog_calls, clients=clients, echoes=echoes)
    except StackError as err:
        fail(err, as_json=as_json)
    figures = report.to_dict()
    figures["goal_echo_p99_ms"] = 50.0
    figures["goal_met"] = report.echo_p99_ms <= 50.0 and report.sessions_lost == 0
    if as_json:
        emit_json(figures)
        return
    for key, value in figures.items():
        typer.echo(f"{key:<24} {value}")
