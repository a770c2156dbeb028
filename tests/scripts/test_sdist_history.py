"""``scripts/sdist_history.py``: releases become commits, one folder kept, unchanged ones
skipped (the sdists built here, not downloaded)."""

from __future__ import annotations

import importlib.util
import subprocess
import tarfile
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[2]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "sdist_history", REPO / "scripts/sdist_history.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _sdist(into: Path, version: str, header: str) -> Path:
    top = into / f"pkg-{version}"
    (top / "vendor" / "ggml" / "include").mkdir(parents=True)
    (top / "vendor" / "ggml" / "include" / "ggml.h").write_text(header, encoding="utf-8")
    (top / "setup.py").write_text("# outside the folder kept\n", encoding="utf-8")
    archive = into / f"pkg-{version}.tar.gz"
    with tarfile.open(archive, "w:gz") as tar:
        tar.add(top, arcname=top.name)
    return archive


def test_one_folder_of_each_release_is_a_commit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script = _script()
    headers = {"1": "enum a { A };\n", "2": "enum a { A };\n", "3": "enum a { A, B };\n"}

    def download(name: str, version: str, into: Path) -> Path:
        return _sdist(into, version, headers[version])

    monkeypatch.setattr(script, "_download", download)
    dest = tmp_path / "history"
    script.build("pkg", ["1", "2", "3"], dest, "pkg", "vendor/ggml", "[stackmap]\n")
    log = subprocess.run(
        ["git", "-C", str(dest), "log", "--format=%s"], capture_output=True, text=True, check=True
    ).stdout.split("\n")
    assert log[:2] == ["pkg 3", "pkg 1"]  # release 2 changed nothing kept: no commit
    assert sorted(p.name for p in dest.iterdir()) == [
        ".git",
        ".gitignore",
        "include",
        "stackmap.toml",
    ]
    assert (dest / "stackmap.toml").read_text(encoding="utf-8") == "[stackmap]\n"
    with pytest.raises(SystemExit, match="no folder vendor/none"):
        script.build("pkg", ["3"], tmp_path / "other", "pkg", "vendor/none")
