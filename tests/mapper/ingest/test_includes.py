"""#include resolution: relative to the including file, then the include paths (configured or
from compile_commands.json), then the nearest file ending with the written path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mapper.errors import ConfigError
from mapper.ingest import ingest, load_map

CONFIG = """[stackmap]
docs = []
tests = []
{extra}
[[layers]]
id = "all"
paths = ["**"]
"""


def _repo(tmp_path: Path, extra: str = "") -> Path:
    files = {
        "a/x.h": "int a_x(void);\n",
        "b/x.h": "int b_x(void);\n",
        "a/main.c": '#include "x.h"\n',
        "b/sub/use.c": '#include "../x.h"\n',
        "c/use.c": "#include <x.h>\n",
        "c/deep/lib.c": "#include <sub/use.c>\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    (tmp_path / "stackmap.toml").write_text(CONFIG.format(extra=extra))
    return tmp_path


def _includes(root: Path) -> set[tuple[str, str]]:
    ingest(root, embed=False, progress=False)
    edges = load_map(root).edges()
    return {(s, t) for s, t, a in edges if a["kind"] == "imports" and s.startswith("file:")}


def test_relative_then_nearest_by_path(tmp_path: Path) -> None:
    assert _includes(_repo(tmp_path)) == {
        ("file:a/main.c", "file:a/x.h"),
        ("file:b/sub/use.c", "file:b/x.h"),
        ("file:c/use.c", "file:a/x.h"),  # two x.h, neither nearer: the first by path
        ("file:c/deep/lib.c", "file:b/sub/use.c"),
    }


def test_include_paths_from_config_and_compile_commands(tmp_path: Path) -> None:
    root = _repo(tmp_path, '[stackmap.c]\ncompile_commands = "build/compile_commands.json"\n')
    (root / "build").mkdir()
    db = [{"directory": str(root / "build"), "file": "../c/use.c", "command": "cc -I../b -c x.c"}]
    (root / "build" / "compile_commands.json").write_text(json.dumps(db))
    assert ("file:c/use.c", "file:b/x.h") in _includes(root)
    (root / "build" / "compile_commands.json").write_text("{broken")
    with pytest.raises(ConfigError, match="cannot read the compilation database"):
        ingest(root, embed=False, progress=False)
