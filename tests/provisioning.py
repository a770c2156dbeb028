"""Tools the suite needs that ``make test`` installs (g++, chromium): skip or fail when missing.

``make test`` installs each tool with apt-get when it is missing and runs pytest with
``STACKMAP_TEST_PROVISIONED=1``; there a missing tool is a set-up fault, and the tests that need
it fail. Plain ``pytest`` outside ``make test`` skips them with the reason instead.
"""

from __future__ import annotations

import os
import shutil

import pytest

PROVISIONED_ENV = "STACKMAP_TEST_PROVISIONED"


def provisioned_tool(*names: str, installs: str) -> tuple[str | None, list[pytest.MarkDecorator]]:
    """The first of ``names`` found on PATH, and the ``pytestmark`` list for a module needing it.

    Found: no marks. Missing under ``make test``: marks that fail each test
    (the ``_missing_provisioned_tool`` fixture in ``tests/conftest.py``). Missing elsewhere: a
    skip whose reason says how ``make test`` installs it (``installs``).
    """
    found = next((path for name in names if (path := shutil.which(name))), None)
    if found is not None:
        return found, []
    why = f"{names[0]} is not installed (`make test` installs it: {installs})"
    if os.environ.get(PROVISIONED_ENV) == "1":
        fail = pytest.mark.usefixtures("_missing_provisioned_tool")
        return None, [pytest.mark.missing_tool(why), fail]
    return None, [pytest.mark.skip(reason=why)]
