"""stack.umd.operators re-exports the KMD's operator-module API name by name, all of it."""

from __future__ import annotations

import stack.kmd.opmod as kmd_api
from stack.umd import operators


def test_every_name_is_re_exported_as_the_same_object() -> None:
    assert operators.__all__ == kmd_api.__all__
    assert all(getattr(operators, n) is getattr(kmd_api, n) for n in kmd_api.__all__)
