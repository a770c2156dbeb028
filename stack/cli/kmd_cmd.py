"""Top-level commands about the KMD shim and the stack as a whole."""

from __future__ import annotations

import platform

import typer

from stack import __version__
from stack.cli._common import emit_json

#: ``refstack kmd ...``: the KMD shim on its own.
kmd_app = typer.Typer(help="The KMD shim: its kernel backends and kernels.", no_args_is_help=True)


def register(app: typer.Typer) -> None:
    app.command("status")(status)
    kmd_app.command("status")(kmd_status)
    app.add_typer(kmd_app, name="kmd")


def kmd_status(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """The kernel backend that would run, its device memory limit and the kernels it has."""
    from stack.kmd.errors import KmdError
    from stack.kmd.kernels.registry import available_backends, kernels_of, select_backend

    try:
        backend = select_backend(None)
    except KmdError as err:
        raise typer.BadParameter(str(err)) from err
    kernels = [k.name for k in kernels_of(backend.name)]
    record = {
        "backend": backend.name,
        "backends_available": list(available_backends()),
        "memory_limit_bytes": backend.memory_limit(),
        "kernels": kernels,
    }
    if as_json:
        emit_json(record)
        return
    typer.echo(f"kernel backend: {backend.name} (available: {', '.join(available_backends())})")
    typer.echo(f"device memory limit: {record['memory_limit_bytes']} B")
    typer.echo(f"kernels ({len(kernels)}): {', '.join(kernels)}")


def status(as_json: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Which layers are present and which kernel backend would run."""
    from stack.kmd.errors import KmdError
    from stack.kmd.kernels.registry import available_backends, select_backend

    layers = ["adapter", "compiler", "runtime", "umd", "kmd"]
    try:
        backend: str | None = select_backend(None).name
        backend_error = None
    except KmdError as err:  # e.g. $REFSTACK_BACKEND names a backend that cannot run here
        backend, backend_error = None, str(err)
    record = {
        "version": __version__,
        "python": platform.python_version(),
        "layers": layers,
        "backend": backend,
        "backends_available": list(available_backends()),
    }
    if backend_error:
        record["backend_error"] = backend_error
    if as_json:
        emit_json(record)
    else:
        typer.echo(f"refstack {__version__} (Python {record['python']})")
        typer.echo("layers: " + " → ".join(layers))
        typer.echo(f"kernel backend: {backend or backend_error}")
