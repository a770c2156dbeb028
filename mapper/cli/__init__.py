"""``stackmap``: the map tool's command line.

Each command group lives in its own module and registers itself on :data:`app`; this module
only assembles them.
"""

from __future__ import annotations

import typer

from mapper import __version__
from mapper.cli import (
    ask_cmd,
    bench_cmd,
    check_cmd,
    eval_cmd,
    impact_cmd,
    ingest_cmd,
    map_cmd,
    plugins,
    query_cmd,
    role_cmd,
    scenario_cmd,
    status_cmd,
)
from mapper.cli._common import ErrorPath, set_debug

HELP = """Map an AI-accelerator software stack: layers, components, interfaces, scenarios.

Examples:

  stackmap init ../other-stack          propose a stackmap.toml for another repository

  stackmap ingest .                     build the graph and the vector index

  stackmap search "who frees device memory" --json

  stackmap show interface:umd_kmd.submit        every edge with all its evidence

  stackmap path component:compiler.emit component:runtime.loader -k 3

  stackmap ls --kind component --layer umd

  stackmap ask "what changes to add a quantize op" --role compiler

  stackmap check --format sarif -o check.sarif

  stackmap diff HEAD~5 HEAD

  stackmap role runtime                 the runtime engineer's view

  stackmap serve                        the web UI on http://127.0.0.1:8750
"""

app = typer.Typer(
    help=HELP,
    no_args_is_help=True,
    add_completion=False,
    cls=ErrorPath,
    pretty_exceptions_enable=False,
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"stackmap {__version__}")
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
    """The map tool."""
    set_debug(ctx, debug)


status_cmd.register(app)
ingest_cmd.register(app)
query_cmd.register(app)
map_cmd.register(app)
bench_cmd.register(app)
check_cmd.register(app)
impact_cmd.register(app)
ask_cmd.register(app)
eval_cmd.register(app)
role_cmd.register(app)
scenario_cmd.register(app)
plugins.register_all(app)


def main() -> None:
    """Console-script entry point."""
    app()
