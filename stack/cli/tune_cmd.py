"""``refstack tune KERNEL``: measure a kernel's tunable launch parameters and keep the best in
the tuning database the UMD consults."""

from __future__ import annotations

import os
from pathlib import Path

import typer

from stack.cli._common import emit_json


def _shape(text: str) -> tuple[int, ...]:
    try:
        dims = tuple(int(d) for d in text.lower().split("x"))
    except ValueError:
        raise typer.BadParameter(f"{text!r} is not a shape like 512x512") from None
    if not dims or min(dims) < 1:
        raise typer.BadParameter(f"{text!r}: every dimension must be at least 1")
    return dims


def _writable_db(path: Path) -> None:
    """typer.BadParameter unless the tuning database can be written at ``path``: checked before
    any measurement, so a run is never lost to a database it cannot save. Creates nothing."""
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
        raise typer.BadParameter(
            f"cannot write the tuning database there: {folder} is not a writable folder",
            param_hint="'--db'",
        )


def tune(
    kernel: str = typer.Argument(
        ..., help="GEMM, MATMUL or CONV2D (Conv); on a GPU (--backend cupy) GEMM or CONV2D."
    ),
    shape: list[str] = typer.Option(
        [],
        "--shape",
        help="An input shape, once per input in ABI order (e.g. --shape 512x256 "
        "--shape 256x128; Conv: X then W, 1x64x56x56 and 64x64x3x3). Default: a typical size.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the report as JSON."),
    db: Path | None = typer.Option(
        None,
        "--db",
        help="Tuning database (default $REFSTACK_TUNING_DB or ~/.cache/refstack/tuning.json).",
        dir_okay=False,
    ),
    backend: str = typer.Option("numpy", "--backend", help="Device backend to tune on."),
    threads: int | None = typer.Option(
        None,
        "--threads",
        min=1,
        max=256,
        help="Compute threads of the device (default $REFSTACK_THREADS).",
    ),
    warmup: int = typer.Option(3, "--warmup", min=0, max=1000, help="Untimed runs per config."),
    iters: int = typer.Option(15, "--iters", min=2, max=10000, help="Timed runs per config."),
) -> None:
    """Tune KERNEL: time every tunable launch configuration against the default, report the
    p95 of each, keep the best per (kernel, shape class, device) in the tuning database."""
    from stack.kmd import KmdDevice
    from stack.umd.tuner import tune as run_tune
    from stack.umd.tuning import TuningDatabase

    shapes = tuple(_shape(s) for s in shape) or None
    database = TuningDatabase(db)
    _writable_db(database.path)
    with KmdDevice(backend, threads=threads) as device:
        report = run_tune(
            kernel,
            shapes,
            device=device,
            db=database,
            warmup=warmup,
            iters=iters,
            progress=lambda line: typer.echo(f"refstack tune: {line}", err=True),
        )
    if as_json:
        emit_json(report.to_dict() | {"db": str(database.path)})
        return
    typer.echo(
        f"{report.kernel} {' '.join('x'.join(map(str, s)) for s in report.shapes)} "
        f"on {report.device} (shape class {report.shape_class}, {report.iters} runs each)"
    )
    param = next(iter(report.default.params))  # tiles (CPU) or block (GPU)
    typer.echo(f"{param:>6} {'p50 ms':>9} {'p95 ms':>9}  ")
    for c in report.candidates:
        mark = ("best " if c is report.best else "") + ("default" if c.default else "")
        typer.echo(f"{c.params[param]:>6} {c.p50_s * 1e3:>9.3f} {c.p95_s * 1e3:>9.3f}  {mark}")
    for params, why in report.invalid:
        typer.echo(f"{params[param]:>6} {'-':>9} {'-':>9}  not run: {why}")
    typer.echo(
        f"best {param}={report.best.params[param]}, gain over default "
        f"{report.gain:.2f}x (p95); saved to {database.path}"
    )


def register(app: typer.Typer) -> None:
    app.command("tune")(tune)
