"""Fixtures of the UMD tests: a NumPy-backed Umd and a session on it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from stack.umd import Umd, UmdSession


@pytest.fixture
def umd() -> Iterator[Umd]:
    u = Umd("numpy")
    yield u
    u.close()


@pytest.fixture
def session(umd: Umd) -> UmdSession:
    return umd.create_session()
