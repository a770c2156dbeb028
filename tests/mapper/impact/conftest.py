"""A fixture stack with known dependents: the check suite's clean three-layer stack plus two
test files, ingested without embeddings, inside a git repository."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from mapper.impact import MapView, open_view
from mapper.ingest import ingest

CLEAN = Path(__file__).parents[1] / "fixtures" / "check" / "clean"
ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "f",
    "GIT_AUTHOR_EMAIL": "f@example.invalid",
    "GIT_COMMITTER_NAME": "f",
    "GIT_COMMITTER_EMAIL": "f@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
}
TESTS = {
    "tests/test_device.py": (
        "from fx.kmd.device import Device\n\n\n"
        "def test_alloc_pads_to_alignment():\n"
        "    assert Device().alloc(8) == 264\n"
    ),
    "tests/test_engine.py": (
        "from fx.runtime.engine import Engine\n\n\n"
        "def test_run_returns_an_address():\n"
        "    assert Engine().run(b'xy') == 258\n"
    ),
}


def git(repo: Path, *args: str) -> str:
    proc = subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, env=ENV, text=True
    )
    return proc.stdout


def _edit(repo: Path, path: str, old: str, new: str) -> None:
    file = repo / path
    text = file.read_text(encoding="utf-8")
    assert old in text, (path, old)
    file.write_text(text.replace(old, new, 1), encoding="utf-8")


def _commit(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("impact") / "stack"
    shutil.copytree(CLEAN, repo)
    for path, text in TESTS.items():
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text, encoding="utf-8")
    (repo / ".gitignore").write_text(".stackmap/\n", encoding="utf-8")
    git(repo, "init", "-q", "-b", "main")
    _commit(repo, "v1")
    ingest(repo, embed=False, progress=False)
    return repo


@pytest.fixture(scope="module")
def view(stack: Path) -> MapView:
    return open_view(stack)


@pytest.fixture
def edit() -> Callable[[Path, str, str, str], None]:
    """Replace one exact text in a file of a repository (asserting it is there)."""
    return _edit


@pytest.fixture
def commit() -> Callable[[Path, str], None]:
    """Commit everything in a repository."""
    return _commit
