"""Command buffers flattened for the KMD: the blobs of a sequence of translations, in order."""

from __future__ import annotations

from collections.abc import Sequence

from stack.umd.pipeline import Translated


def flatten(ops: Sequence[Translated]) -> tuple[tuple[bytes, ...], tuple[int, ...]]:
    """``(blobs, scratch)`` of ``ops``: every blob in order, and the conversion scratch they own."""
    blobs: list[bytes] = []
    scratch: list[int] = []
    for t in ops:
        blobs += t.blobs
        scratch += t.scratch
    return tuple(blobs), tuple(scratch)
