"""Shared pieces of the ``stackmap`` command line: the one error path, JSON output, exits.

Every command runs inside :class:`ErrorPath`: a :class:`~mapper.errors.MapperError` or an
operating-system error (a missing file, a folder that does not exist) becomes one line on
stderr (``error: …``) and exit status 2; any other exception is a bug in stackmap and is one
line too, exit status 1. ``stackmap --debug …`` (or ``STACKMAP_DEBUG=1``) shows the traceback
instead. Usage errors (a bad option, a missing argument, an unknown command) are one line too,
exit status 2.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any, NoReturn

import typer
from typer.core import TyperGroup

from mapper.errors import MapperError

#: Exit status of a usage error (click's convention).
EXIT_USAGE = 2
#: Exit status when the tool could not run (bad config, unreadable store, bad arguments).
EXIT_ERROR = 2
#: Exit status of an unexpected failure (a bug): reported in one line, traceback with --debug.
EXIT_BUG = 1
DEBUG_ENV = "STACKMAP_DEBUG"


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


def os_message(exc: OSError) -> str:
    """One line for an operating-system error: what failed, on which path."""
    what = exc.strerror or str(exc) or type(exc).__name__
    return f"{what}: {exc.filename}" if exc.filename else what


def usage_error(exc: Exception) -> NoReturn:
    """A usage error (bad option, missing argument, unknown command) as one line on stderr
    naming the help to read, and exit status 2."""
    message = " ".join(str(getattr(exc, "format_message", exc.__str__)()).split())
    ctx = getattr(exc, "ctx", None)
    hint = f" (see '{ctx.command_path} --help')" if ctx is not None else ""
    typer.echo(f"error: {message}{hint}", err=True)
    raise typer.Exit(EXIT_USAGE)


class ErrorPath(TyperGroup):
    """The root group: turns what a command raises into one line and an exit status; usage
    errors too (click would print a usage block), at the root and in every subcommand."""

    def make_context(
        self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any
    ) -> Any:
        try:
            return super().make_context(info_name, args, parent=parent, **extra)
        except Exception as exc:
            if not _usage(exc):
                raise
            usage_error(exc)

    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except (typer.Exit, typer.Abort, KeyboardInterrupt):
            raise
        except Exception as exc:
            if _usage(exc):
                usage_error(exc)
            if _debug(ctx):
                raise
            if isinstance(exc, MapperError):
                message, code = str(exc), EXIT_ERROR
            elif isinstance(exc, OSError):
                message, code = os_message(exc), EXIT_ERROR
            elif isinstance(exc, MemoryError):
                message, code = "out of memory", EXIT_ERROR
            else:
                message = (
                    f"internal error: {type(exc).__name__}: {exc} "
                    "(run `stackmap --debug ...` for the traceback)"
                )
                code = EXIT_BUG
            typer.echo(f"error: {message}", err=True)
            raise typer.Exit(code) from None


def _usage(exc: Exception) -> bool:
    """A click usage or input error (matched by its interface: typer vendors click)."""
    return hasattr(exc, "exit_code") and hasattr(exc, "format_message")


def _debug(ctx: Any) -> bool:
    return bool(ctx.meta.get("stackmap.debug")) or os.environ.get(DEBUG_ENV) == "1"


def set_debug(ctx: Any, debug: bool) -> None:
    ctx.meta["stackmap.debug"] = debug


def writable_output(output: Path, *inputs: Path) -> None:
    """MapperError for an output path in a missing folder, a folder, or equal to an input."""
    if not output.parent.is_dir():
        raise MapperError(f"--output: folder {output.parent} does not exist", path=str(output))
    if output.is_dir():
        raise MapperError(f"--output: {output} is a folder", path=str(output))
    for source in inputs:
        same = output.resolve() == source.resolve()
        if not same and output.exists() and source.exists():
            same = os.path.samefile(output, source)
        if same:
            raise MapperError(
                f"--output is also an input ({source}): choose another output path",
                path=str(output),
            )
