"""The map tool's exception tree, rooted in :class:`MapperError`.

Errors carry the file and line they concern where there is one, so the CLI can print
``path:line: message`` and ``--json`` output can carry them as fields.
"""

from __future__ import annotations

from typing import Any


class MapperError(Exception):
    """Root of every error the map tool raises on purpose."""

    def __init__(
        self,
        message: str,
        *,
        path: str | None = None,
        line: int | None = None,
        **details: Any,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line
        self.details = details

    def to_dict(self) -> dict[str, Any]:
        record: dict[str, Any] = {"error": type(self).__name__, "message": self.message}
        if self.path is not None:
            record["path"] = self.path
        if self.line is not None:
            record["line"] = self.line
        record.update({k: v for k, v in self.details.items() if v is not None})
        return record

    def __str__(self) -> str:
        if self.path is None:
            return self.message
        loc = f"{self.path}:{self.line}" if self.line is not None else self.path
        return f"{loc}: {self.message}"


class ConfigError(MapperError):
    """``stackmap.toml`` (or ``[tool.stackmap]``) is missing, malformed or inconsistent."""


class IngestError(MapperError):
    """A source could not be read or parsed at all (partial parses are warnings, not errors)."""


class ContractError(MapperError):
    """A contract file does not follow the schema in ``contracts/README.md``."""


class StoreError(MapperError):
    """The persisted map or the vector index is missing, corrupt or of another schema version."""


class StoreCorrupt(StoreError):
    """A store file is damaged or not what its name says; ``rebuild`` is the command to run."""


class StoreOutdated(StoreError):
    """A store file was written by another version of the tool; ``rebuild`` rebuilds it."""


class MapNotIngested(StoreError):
    """No map has been built for this repository yet; ``rebuild`` is the command to run."""


class UnknownNameError(MapperError):
    """A registry was asked for a name it does not hold; the message lists the known names."""

    def __init__(self, kind: str, name: str, known: list[str]) -> None:
        super().__init__(
            f"unknown {kind} {name!r}; known: {', '.join(sorted(known)) or '(none)'}",
            kind=kind,
            name=name,
            known=sorted(known),
        )
