"""The web UI's exception tree, rooted in :class:`WebError`.

Every error carries what a person needs to act on it: an HTTP status, a stable ``code``, a
message, and where one helps the command to run or the names that would have worked. The app
renders the same record as an HTML page or as JSON (``/api/...``).
"""

from __future__ import annotations

from typing import Any


class WebError(Exception):
    """Root of every error the web UI raises on purpose."""

    status = 500
    code = "error"

    def __init__(self, message: str, *, command: str | None = None, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.command = command
        self.details = details

    def to_dict(self) -> dict[str, Any]:
        record: dict[str, Any] = {"error": self.code, "message": self.message}
        if self.command:
            record["command"] = self.command
        record.update({k: v for k, v in self.details.items() if v is not None})
        return record


class MapNotIngested(WebError):
    """No map has been built for the repository yet (or it is of another schema version)."""

    status = 503
    code = "map-not-ingested"


class EmptyMap(WebError):
    """The map exists but holds no nodes: the config's layers match no files."""

    status = 503
    code = "empty-map"


class UnknownNode(WebError):
    """A node id that is not on the map; ``suggestions`` lists near ids."""

    status = 404
    code = "unknown-node"


class UnknownRole(WebError):
    """A role that is not in the config; ``known`` lists the configured ones."""

    status = 404
    code = "unknown-role"


class BadRequest(WebError):
    """A parameter the UI cannot use (unknown kind, layer or evidence name, empty question)."""

    status = 400
    code = "bad-request"


class PayloadTooLarge(WebError):
    """Input over a size cap (a pasted patch too long, too many files or hunks)."""

    status = 413
    code = "too-large"


class ConfigProblem(WebError):
    """``stackmap.toml`` is missing or malformed."""

    status = 500
    code = "config"
