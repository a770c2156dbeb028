"""Shared pieces of the ``stackmap`` command line: JSON output and typed-error exits."""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

import typer

from mapper.errors import MapperError

#: Exit status when the tool could not run (bad config, unreadable store, bad arguments).
EXIT_ERROR = 2


def emit_json(data: Any) -> None:
    """Print one JSON document on stdout (data only; logs and progress go to stderr)."""
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")


def fail(err: MapperError | str, *, as_json: bool = False) -> NoReturn:
    """Report an error on stderr (and as JSON on stdout when asked) and exit with 2."""
    record = err.to_dict() if isinstance(err, MapperError) else {"error": "Error", "message": err}
    if as_json:
        emit_json(record)
    typer.echo(f"error: {err}", err=True)
    raise typer.Exit(EXIT_ERROR)


def not_implemented(what: str) -> NoReturn:
    """Refuse loudly: a command that exists in the help but is not built yet."""
    typer.echo(f"error: `{what}` is not implemented yet", err=True)
    raise typer.Exit(EXIT_ERROR)
