"""Errors of the check: all are :class:`~mapper.errors.MapperError` (exit status 2)."""

from __future__ import annotations

from mapper.errors import MapperError


class CheckError(MapperError):
    """The check could not run (as opposed to: it ran and found drift)."""


class BaselineError(CheckError):
    """The baseline file is malformed: a waiver without owner or expiry, a bad date, bad YAML."""


class HistoryError(CheckError):
    """``git`` failed in a way that is not simply "not a repository"."""


class RevisionError(CheckError):
    """``stackmap diff`` was given a revision git cannot resolve."""
