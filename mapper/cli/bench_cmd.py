"""``stackmap bench ingest|ask|query|check``: timings as ratios against a floor measured in
the same run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import typer

from mapper.cli._common import emit_json, fail
from mapper.errors import MapperError

bench_app = typer.Typer(help="Benchmarks of the map tool.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.add_typer(bench_app, name="bench")


@bench_app.command("ingest")
def bench_ingest(
    root: Path = typer.Argument(Path("."), help="Repository root."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    repeat: int = typer.Option(
        3, "--repeat", min=1, max=1000, help="Runs per figure (best is kept)."
    ),
    embed: bool = typer.Option(True, "--embed/--no-embed", help="Also time embedding runs."),
) -> None:
    """files, loc, parse_only_s, full_noembed_s, full_s, incremental_1file_s."""
    from mapper.ingest.bench import bench_ingest as run

    _bench(run, root, as_json, repeat=repeat, embed=embed)


@bench_app.command("ask")
def bench_ask(
    root: Path = typer.Argument(Path("."), help="Repository root (its map must be built)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    repeat: int = typer.Option(3, "--repeat", min=1, max=1000, help="Passes over the questions."),
) -> None:
    """p50/p95/max of `stackmap ask` on the warm map, with the question-embedding baseline."""
    from mapper.agent.bench import bench_ask as run

    _bench(run, root, as_json, repeat=repeat)


def _bench(run: Callable[..., dict[str, Any]], root: Path, as_json: bool, **options: Any) -> None:
    """Run one benchmark (its option ranges are checked by typer) and print its figures."""
    try:
        result = run(root, **options)
    except MapperError as exc:
        fail(exc, as_json=as_json)
    if as_json:
        emit_json(result)
        return
    for key, value in result.items():
        typer.echo(f"{key}: {value}")


@bench_app.command("query")
def bench_query(
    root: Path = typer.Argument(Path("."), help="Repository root (its map must be built)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    samples: int = typer.Option(200, "--samples", min=1, max=100_000, help="Queries per figure."),
) -> None:
    """open_s, node_p95_ms, hop3_p95_ms, path_p95_ms on the current map, with their goals."""
    from mapper.query.bench import bench_query as run

    _bench(run, root, as_json, samples=samples)


@bench_app.command("check")
def bench_check(
    root: Path = typer.Argument(Path("."), help="Repository root."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    repeat: int = typer.Option(
        3, "--repeat", min=1, max=1000, help="Runs per figure (best is kept)."
    ),
) -> None:
    """reparse_s (the check parsing every file again), map_s (on the stored map), their ratio;
    the same in CPU time (*_cpu_s)."""
    from mapper.check.bench import bench_check as run

    _bench(run, root, as_json, repeat=repeat)
