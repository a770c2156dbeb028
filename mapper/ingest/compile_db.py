"""Include paths for C/C++/CUDA: configured ones plus the ``-I`` flags of a compilation database.

``[stackmap.c] include_paths`` lists repository-relative folders; ``compile_commands`` names a
``compile_commands.json`` (the format CMake, Bear and Meson write: a list of
``{"directory", "file", "command" | "arguments"}``) whose ``-I``/``-isystem``/``-iquote``
folders inside the repository are added, in first-seen order. Folders outside the repository
are dropped (their headers are not indexed).
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

from mapper.config import StackmapConfig
from mapper.errors import ConfigError

_FLAGS = ("-I", "-isystem", "-iquote")


def include_paths(config: StackmapConfig) -> tuple[str, ...]:
    """The include folders, repository-relative; ConfigError for an unreadable database."""
    found = list(config.c.include_paths)
    if config.c.compile_commands:
        found.extend(_database_paths(config.root, config.c.compile_commands))
    return tuple(dict.fromkeys(p.strip("/") for p in found if p.strip("/")))


def _database_paths(root: Path, name: str) -> list[str]:
    path = root / name
    try:
        entries = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ConfigError(f"cannot read the compilation database: {exc}", path=name) from exc
    if not isinstance(entries, list):
        raise ConfigError("a compilation database is a JSON list of commands", path=name)
    out: list[str] = []
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        args = entry.get("arguments")
        if not isinstance(args, list):
            args = shlex.split(str(entry.get("command", "")))
        directory = Path(str(entry.get("directory", root)))
        for i, arg in enumerate(args):
            arg = str(arg)
            folder = next((arg[len(f) :] for f in _FLAGS if arg.startswith(f) and arg != f), None)
            if folder is None and arg in _FLAGS and i + 1 < len(args):
                folder = str(args[i + 1])
            if folder:
                out.extend(_inside(root, directory / folder))
    return out


def _inside(root: Path, folder: Path) -> list[str]:
    try:
        return [folder.resolve().relative_to(root.resolve()).as_posix()]
    except ValueError:
        return []
