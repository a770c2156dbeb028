"""The layering contract is enforced, not just described: import-linter must catch a violation."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _copy_tree(dst: Path) -> None:
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    for pkg in ("stack", "mapper", "web"):
        shutil.copytree(REPO / pkg, dst / pkg, ignore=ignore)
    shutil.copy(REPO / "pyproject.toml", dst / "pyproject.toml")


def _lint(root: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(root), "COLUMNS": "300"}
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    _copy_tree(tmp_path)
    return tmp_path


def test_clean_copy_keeps_every_contract(tree: Path) -> None:
    result = _lint(tree)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


@pytest.mark.parametrize(
    ("where", "line", "contract"),
    [
        ("stack/compiler/_bad.py", "import stack.kmd\n", "compiler imports the runtime"),
        ("stack/kmd/_bad.py", "import stack.umd\n", "adapter > compiler > runtime > umd > kmd"),
        ("mapper/_bad.py", "import stack.errors\n", "never imports the stack"),
        ("web/_bad.py", "import stack\n", "never the stack"),
    ],
)
def test_violation_is_reported(tree: Path, where: str, line: str, contract: str) -> None:
    (tree / where).write_text(line)
    result = _lint(tree)
    assert result.returncode != 0
    broken = [ln for ln in result.stdout.splitlines() if ln.endswith("BROKEN")]
    assert any(contract in ln for ln in broken), result.stdout
