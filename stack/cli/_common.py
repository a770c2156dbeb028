"""Shared pieces of the ``refstack`` command line: JSON output and typed-error exits."""

from __future__ import annotations

import json
import sys
from typing import Any, NoReturn

import typer

from stack.errors import StackError

#: Exit status when the command could not do its job (bad input, refused operation).
EXIT_ERROR = 2


def emit_json(data: Any) -> None:
    """Print one JSON document on stdout (data only; logs go to stderr)."""
    sys.stdout.write(json.dumps(data, indent=2, sort_keys=True, default=str) + "\n")


def fail(err: StackError | str, *, as_json: bool = False) -> NoReturn:
    """Report an error on stderr (and as JSON on stdout when asked) and exit non-zero."""
    if isinstance(err, StackError):
        if as_json:
            emit_json(err.to_dict())
        typer.echo(f"error: {err}", err=True)
    else:
        if as_json:
            emit_json({"error": "Error", "message": err})
        typer.echo(f"error: {err}", err=True)
    raise typer.Exit(EXIT_ERROR)


def not_implemented(what: str) -> NoReturn:
    """Refuse loudly: a command that exists in the help but is not built yet."""
    typer.echo(f"error: `{what}` is not implemented yet", err=True)
    raise typer.Exit(EXIT_ERROR)
