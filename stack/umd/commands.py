"""Command buffers flattened for the KMD, cached for re-submission."""

from __future__ import annotations

from collections.abc import Sequence

from stack.umd.pipeline import Translated


class FlatCommands:
    """The blobs (in order) and owned scratch of a command buffer (a sequence of translations).

    A tuple of translations is immutable, so its flattening is cached by the tuple's identity:
    a command buffer submitted again (as the runtime does every run) is not walked again. The
    cache keeps each tuple it holds alive, so an id stays unique while its entry lives; it is
    cleared when ``limit`` entries are reached. Thread-safe (single dict operations).
    """

    def __init__(self, limit: int = 1024) -> None:
        self.limit = limit
        self._by_id: dict[int, tuple[object, tuple[bytes, ...], tuple[int, ...]]] = {}

    def get(self, ops: Sequence[Translated]) -> tuple[tuple[bytes, ...], tuple[int, ...]]:
        """``(blobs, scratch)`` of ``ops``."""
        if type(ops) is not tuple:
            return _flatten(ops)
        hit = self._by_id.get(id(ops))
        if hit is not None and hit[0] is ops:
            return hit[1], hit[2]
        blobs, scratch = _flatten(ops)
        if len(self._by_id) >= self.limit:
            self._by_id.clear()
        self._by_id[id(ops)] = (ops, blobs, scratch)
        return blobs, scratch


def _flatten(ops: Sequence[Translated]) -> tuple[tuple[bytes, ...], tuple[int, ...]]:
    blobs: list[bytes] = []
    scratch: list[int] = []
    for t in ops:
        blobs += t.blobs
        scratch += t.scratch
    return tuple(blobs), tuple(scratch)
