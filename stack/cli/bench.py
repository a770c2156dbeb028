"""``refstack bench …``: benchmark commands, one module per layer."""

from __future__ import annotations

import typer

from stack.cli import bench_kmd, bench_model, bench_remote, bench_umd

app = typer.Typer(
    help="Benchmarks that print figures (``--json`` for machines).", no_args_is_help=True
)
bench_kmd.register(app)
bench_umd.register(app)
bench_model.register(app)
bench_remote.register(app)
