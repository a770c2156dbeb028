"""Fixtures shared by the map tool's tests: the miniature repository under fixtures/."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"
MINIREPO = FIXTURES / "minirepo"


@pytest.fixture
def minirepo(tmp_path: Path) -> Path:
    """A private, writable copy of the miniature repository."""
    dest = tmp_path / "minirepo"
    shutil.copytree(MINIREPO, dest, ignore=shutil.ignore_patterns(".stackmap"))
    return dest
