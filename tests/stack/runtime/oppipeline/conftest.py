"""Fixtures of the operator pipeline tests: a NumPy UMD."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from stack.umd import Umd


@pytest.fixture
def umd() -> Iterator[Umd]:
    u = Umd("numpy")
    yield u
    u.close()
