"""Drafted entries for the uses the map does not discover as interfaces: what SM201 reports.

``stackmap init --contracts`` drafts an entry per interface the map discovers
(:mod:`mapper.ingest.draft_contracts`). The layer check (SM201) sees a wider set of uses: every
name a file imports from the layer directly below and every call through an imported module,
whatever the name denotes — a module imported whole, a lower-case module-level object, a
method the code never defines (``Struct.from_buffer_copy`` of a ctypes class). Each such use
that no drafted interface of its pair declares (:func:`mapper.ingest.contracts.declares`)
becomes an entry too: its kind from what the name resolves to (the nearest enclosing
definition when the name itself has none), its symbol that definition, where it is used, and
every semantic field asked as an open question. So a fresh draft and the check agree on what
the upper layer uses: no SM201 is left behind, only the open questions (SM402).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from mapper.ingest.contracts import declares

_SHOWN = 5


@dataclass(frozen=True, slots=True)
class Use:
    """A symbol of ``lower`` that ``upper`` uses without a contract declaring it."""

    upper: str
    lower: str
    symbol: str  # the definition used, as a contract entry names it
    kind: str  # its contract interface kind (``module`` for a module used whole)
    path: str  # the file defining it
    line: int | None
    how: str  # ``import`` or ``call``: how the first use reaches it
    sites: tuple[tuple[str, int | None], ...]  # the first use in each using file
    names: tuple[str, ...]  # the names the code uses it by (``Cls.from_buffer_copy``)


def undeclared(uses: Iterable[Use], symbols: Sequence[str]) -> list[Use]:
    """The uses none of the drafted interface ``symbols`` declares under any of the names the
    code uses (as the layer check asks), one per symbol used."""
    written = {*symbols, *(s.rpartition(":")[2] for s in symbols)}  # C: ``path:NAME`` and NAME
    out: dict[str, Use] = {}
    for use in uses:
        if not any(declares(s, n) for s in written for n in use.names):
            out.setdefault(use.symbol, use)
    return list(out.values())


def entry(use: Use, questions: list[dict[str, str]]) -> dict[str, Any]:
    """The drafted contract entry for ``use``, asking ``questions`` (every semantic field)."""
    where = f"{use.path}:{use.line}" if use.line else use.path
    shown = ", ".join(f"{p}:{n}" if n else p for p, n in use.sites[:_SHOWN])
    more = f" and {len(use.sites) - _SHOWN} more" if len(use.sites) > _SHOWN else ""
    named = ", ".join(use.names[:_SHOWN]) + (" and more" if len(use.names) > _SHOWN else "")
    return {
        "id": f"{use.upper}_{use.lower}.{use.symbol.rpartition(':')[2]}",
        "kind": use.kind,
        "symbol": use.symbol,
        "description": f"{use.kind} {use.symbol}, defined at {where}; used by {use.upper} as "
        f"{named} (first by {use.how}) in {len(use.sites)} file(s): {shown}{more}. The code "
        "shows the use, not a call the map follows: drafted so that the contract lists every use.",
        "open_questions": questions,
    }
