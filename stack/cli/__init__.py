"""``refstack``: the reference stack's command line.

Each command group lives in its own module and registers itself on :data:`app`; this module
only assembles them. The CLI sits outside the five layers, so it may import any of them.
"""

from __future__ import annotations

import typer

from stack import __version__
from stack.cli import bench, kmd_cmd, model_cmd, pipeline_cmd, run_cmd, tune_cmd, umd_cmd
from stack.cli._common import ErrorPath, set_debug

HELP = """The reference five-layer AI-accelerator stack: adapter → compiler → runtime → UMD → KMD.

Examples:

  refstack status --json

  refstack compile model.onnx -o model.sx

  refstack run model.sx --input x=x.npy --output-dir out/

  refstack pipeline run pipeline.yaml --input x=x.npy --output-dir out/

  refstack umd serve --port 50051

  refstack bench kmd --json

  refstack conformance --json

  refstack tune GEMM --shape 512x512 --shape 512x512
"""

app = typer.Typer(
    help=HELP,
    no_args_is_help=True,
    add_completion=False,
    cls=ErrorPath,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"refstack {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    ctx: typer.Context,
    version: bool = typer.Option(
        False, "--version", callback=_version, is_eager=True, help="Print the version and exit."
    ),
    debug: bool = typer.Option(
        False, "--debug", help="Show the traceback of an error instead of one line."
    ),
) -> None:
    """The reference stack."""
    set_debug(ctx, debug)


app.add_typer(bench.app, name="bench")
app.add_typer(umd_cmd.app, name="umd")
app.add_typer(pipeline_cmd.app, name="pipeline")
kmd_cmd.register(app)
model_cmd.register(app)
run_cmd.register(app)
tune_cmd.register(app)


def main() -> None:
    """Console-script entry point."""
    app()
