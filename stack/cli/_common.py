"""Shared pieces of the ``refstack`` command line: the one error path, JSON output, progress.

Every command runs inside :class:`ErrorPath`: a :class:`~stack.errors.StackError` or an
operating-system error (a missing file, a folder that does not exist, a busy port) becomes one
line on stderr (``error: …``) and exit status 2; any other exception is a bug in refstack and is
one line too, exit status 1. ``refstack --debug …`` (or ``REFSTACK_DEBUG=1``) shows the
traceback instead. Usage errors (a bad option, a missing argument, an unknown command) are one
line too, exit status 2.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

import typer
from typer.core import TyperGroup

from stack.errors import StackError

#: Exit status of a usage error (click's convention).
EXIT_USAGE = 2
#: Exit status when the command could not do its job (bad input, refused operation).
EXIT_ERROR = 2
#: Exit status of an unexpected failure (a bug): reported in one line, traceback with --debug.
EXIT_BUG = 1
DEBUG_ENV = "REFSTACK_DEBUG"


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
            if isinstance(exc, StackError):
                typer.echo(f"error: {exc}", err=True)
                raise typer.Exit(EXIT_ERROR) from None
            if isinstance(exc, OSError):
                typer.echo(f"error: {os_message(exc)}", err=True)
                raise typer.Exit(EXIT_ERROR) from None
            if isinstance(exc, MemoryError):
                typer.echo("error: out of memory", err=True)
                raise typer.Exit(EXIT_ERROR) from None
            typer.echo(
                f"error: internal error: {type(exc).__name__}: {exc} "
                "(run `refstack --debug ...` for the traceback)",
                err=True,
            )
            raise typer.Exit(EXIT_BUG) from None


def _usage(exc: Exception) -> bool:
    """A click usage or input error (matched by its interface: typer vendors click)."""
    return hasattr(exc, "exit_code") and hasattr(exc, "format_message")


def _debug(ctx: Any) -> bool:
    return bool(ctx.meta.get("refstack.debug")) or os.environ.get(DEBUG_ENV) == "1"


def set_debug(ctx: Any, debug: bool) -> None:
    ctx.meta["refstack.debug"] = debug


def refuse_overwrite(output: Path, *inputs: Path) -> None:
    """Raise typer.BadParameter when ``output`` is one of ``inputs`` (same file, any spelling)."""
    for source in inputs:
        same = output.resolve() == source.resolve()
        if not same and output.exists() and source.exists():
            same = os.path.samefile(output, source)
        if same:
            raise typer.BadParameter(
                f"{output} is also an input ({source}): choose another output path"
            )


@contextmanager
def progress(what: str, *, after_s: float = 2.0, every_s: float = 10.0) -> Iterator[None]:
    """Plain progress lines on stderr for a step that turns out long, terminal or not.

    Nothing is printed for a step shorter than ``after_s``; a longer one gets ``refstack:
    WHAT…`` then ``… still WHAT (N s)`` every ``every_s`` and ``WHAT: done in N s`` at the end.
    """
    start = time.monotonic()
    done = threading.Event()
    said = threading.Event()

    def tick() -> None:
        wait = after_s
        while not done.wait(wait):
            elapsed = time.monotonic() - start
            line = f"... still {what} ({elapsed:.0f} s)" if said.is_set() else f"{what}..."
            sys.stderr.write(f"refstack: {line}\n")
            sys.stderr.flush()
            said.set()
            wait = every_s

    ticker = threading.Thread(target=tick, name="refstack-progress", daemon=True)
    ticker.start()
    try:
        yield
    finally:
        done.set()
        ticker.join()
        if said.is_set():
            sys.stderr.write(f"refstack: {what}: done in {time.monotonic() - start:.1f} s\n")
            sys.stderr.flush()
