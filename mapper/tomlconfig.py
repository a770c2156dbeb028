"""Strict reading of a TOML configuration: the file with its text, keys checked against the
known ones (the closest suggested), typed values, and the line of a bad key for the error.
Every problem is a :class:`~mapper.errors.ConfigError` naming the file (and line when known).
"""

from __future__ import annotations

import difflib
import re
import tomllib
from pathlib import Path
from typing import Any

from mapper.errors import ConfigError


def read_toml(path: Path, max_bytes: int) -> tuple[dict[str, Any], str]:
    """The parsed file and its text (for the line of a bad key)."""
    try:
        if path.stat().st_size > max_bytes:
            raise ConfigError(f"config larger than {max_bytes} bytes", path=path.name)
        text = path.read_text(encoding="utf-8")
        return tomllib.loads(text), text
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read config: {exc}", path=path.name) from exc


def line_of_key(text: str, key: str) -> int | None:
    """The first line assigning ``key`` (or opening a table named ``key``), 1-based."""
    quoted = re.escape(key)
    pattern = re.compile(rf"""^\s*(?:\[+\s*[\w."]*?)?["']?{quoted}["']?\s*(?:=|\]|\.)""")
    for number, line in enumerate(text.splitlines(), 1):
        if pattern.match(line):
            return number
    return None


def known_keys(
    table: dict[str, Any], known: tuple[str, ...], where: str, text: str, file: str
) -> None:
    """ConfigError for the first key of ``table`` not in ``known``, with a suggestion."""
    for key in table:
        if key in known:
            continue
        close = difflib.get_close_matches(key, known, n=1)
        hint = f"did you mean {close[0]!r}?" if close else f"known: {', '.join(known)}"
        raise ConfigError(
            f"unknown {where} key {key!r}; {hint}", path=file, line=line_of_key(text, key)
        )


def text_value(value: Any, key: str, default: str, text: str, file: str) -> str:
    """``value`` when it is a string, ``default`` when absent; else ConfigError at its line."""
    if value is None:
        return default
    if not isinstance(value, str):
        raise ConfigError(
            f"{key} must be a string, not {type(value).__name__}",
            path=file,
            line=line_of_key(text, key.rsplit(".", 1)[-1].split("]")[-1]),
        )
    return value


def strs(value: Any, where: str, file: str) -> tuple[str, ...]:
    """A string or a list of strings as a tuple (empty when absent); else ConfigError."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"{where} must be a list of strings", path=file)
    return tuple(value)


def positive_int(value: Any, key: str, text: str, file: str) -> int | None:
    """``value`` when it is a whole number ≥ 1, None when absent; else a ConfigError on its line."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(
            f"{key} must be a positive whole number", path=file, line=line_of_key(text, key)
        )
    return value
