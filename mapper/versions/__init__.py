"""Versioned maps: the interface surface of a repository at a revision, and what changed
between two revisions (``stackmap diff REV_A REV_B``), classified breaking or compatible."""

from __future__ import annotations

from mapper.versions.compare import Change, Impact, compare_surfaces
from mapper.versions.gitrev import diff_revisions
from mapper.versions.surface import Item, Surface, surface_of

__all__ = [
    "Change",
    "Impact",
    "Item",
    "Surface",
    "compare_surfaces",
    "diff_revisions",
    "surface_of",
]
