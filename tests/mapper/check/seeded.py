"""The seeded-drift cases' vocabulary: edits applied to the clean fixture stack, and a case.

A :class:`Drift` is one known drift (its edits, committed on top of the clean stack) and the
exact finding set ``stackmap check`` must report for it. The cases are in ``seeded_code.py``
(code-side drifts: signatures and layering, SM1xx/SM2xx) and ``seeded_map.py`` (map-side
drifts: docs, sync, proto and contract fields, SM3xx-SM6xx); ``test_seeded_drift.py`` runs them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

Edit = Callable[[Path], None]


def replace_in(path: str, old: str, new: str) -> Edit:
    def edit(root: Path) -> None:
        file = root / path
        text = file.read_text(encoding="utf-8")
        assert old in text, f"{old!r} not in {path}"
        file.write_text(text.replace(old, new, 1), encoding="utf-8")

    return edit


def remove(path: str) -> Edit:
    def edit(root: Path) -> None:
        (root / path).unlink()

    return edit


@dataclass(frozen=True)
class Drift:
    id: str
    edits: tuple[Edit, ...]
    # rule, code location, map location, classification, ids of the map nodes it is about
    expected: tuple[tuple[str, str | None, str | None, str, tuple[str, ...]], ...]


KMD_H = "fx/kmd/include/fx_kmd.h"
