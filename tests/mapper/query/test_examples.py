"""The runnable examples of the query API's documentation (mapper/query/__init__.py)."""

from __future__ import annotations

import doctest
from pathlib import Path

import mapper.query


def test_the_documented_examples_run(built: Path) -> None:
    result = doctest.testmod(mapper.query, extraglobs={"root": built}, report=True)
    assert result.failed == 0
    assert result.attempted == 17
