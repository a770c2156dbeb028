"""Fixture stacks for the check tests: the clean stack copied into a fresh git repository."""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

CLEAN = Path(__file__).parents[1] / "fixtures" / "check" / "clean"

GIT_ENV = {
    "GIT_AUTHOR_NAME": "fixture",
    "GIT_AUTHOR_EMAIL": "fixture@example.invalid",
    "GIT_COMMITTER_NAME": "fixture",
    "GIT_COMMITTER_EMAIL": "fixture@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
    "GIT_CONFIG_SYSTEM": os.devnull,
}


def git(repo: Path, *args: str) -> str:
    env = {**os.environ, **GIT_ENV}
    proc = subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, env=env, check=True
    )
    return proc.stdout


def commit_all(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "--no-verify", "-m", message)


@pytest.fixture
def clean_repo(tmp_path: Path) -> Path:
    """The clean fixture stack, committed once in a new git repository."""
    repo = tmp_path / "stack"
    shutil.copytree(CLEAN, repo)
    git(repo, "init", "-q", "-b", "main")
    commit_all(repo, "clean stack")
    return repo


@pytest.fixture
def clean_copy(tmp_path: Path) -> Path:
    """The clean fixture stack copied outside any git repository."""
    repo = tmp_path / "plain"
    shutil.copytree(CLEAN, repo)
    return repo


@pytest.fixture
def commit() -> Callable[[Path, str], None]:
    """Commit everything in a fixture repository (add -A)."""
    return commit_all
