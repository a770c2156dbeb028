"""``refstack bench kmd``: fence latency and GEMM throughput through the KMD shim."""

from __future__ import annotations

import typer

from stack.cli._common import emit_json, fail
from stack.errors import StackError


def register(app: typer.Typer) -> None:
    app.command("kmd")(bench_kmd)


def bench_kmd(
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    backend: str = typer.Option(None, "--backend", help="numpy | cupy (default: auto)."),
    size: int = typer.Option(2048, "--size", min=1, max=16384, help="GEMM side (N x N x N)."),
    reps: int = typer.Option(
        5, "--reps", min=1, max=10_000, help="Timed GEMM repetitions (best and median)."
    ),
    iters: int = typer.Option(
        2000, "--iters", min=1, max=10_000_000, help="Fence round trips measured."
    ),
) -> None:
    """Fence latency and GEMM throughput through the KMD shim against the bare library."""
    from stack.kmd import bench

    try:
        record = bench.run(backend, size=size, reps=reps, iters=iters)
    except StackError as err:
        fail(err, as_json=as_json)
    if as_json:
        emit_json(record)
        return
    typer.echo(f"backend                {record['backend']}")
    typer.echo(
        f"fence latency          p50 {record['fence_latency_us_p50']} us, "
        f"p99 {record['fence_latency_us_p99']} us "
        f"(thread round trip p50 {record['thread_round_trip_us_p50']} us)"
    )
    typer.echo(
        f"GEMM {size}^3            {record['gemm_gflops']} GFLOP/s through the KMD, "
        f"{record['gemm_ref_gflops']} GFLOP/s bare: ratio {record['gemm_ratio']} (goal >= 0.9)"
    )
