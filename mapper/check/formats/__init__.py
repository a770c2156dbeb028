"""Output formats: one module per format, each registering a ``render(report) -> str``.

Every format renders the same :class:`~mapper.check.report.Report`; none of them re-runs or
filters the check, so text, JSON, Markdown, SARIF and JUnit always agree.
"""

from __future__ import annotations

from collections.abc import Callable

from mapper.check.report import Report
from mapper.errors import UnknownNameError

Renderer = Callable[[Report], str]

_FORMATS: dict[str, Renderer] = {}


def register(name: str, render: Renderer) -> None:
    if name in _FORMATS:
        raise ValueError(f"output format {name!r} is already registered")
    _FORMATS[name] = render


def get(name: str) -> Renderer:
    _load()
    try:
        return _FORMATS[name]
    except KeyError:
        raise UnknownNameError("output format", name, list(_FORMATS)) from None


def names() -> tuple[str, ...]:
    _load()
    return tuple(_FORMATS)


def render(report: Report, name: str) -> str:
    return get(name)(report)


def _load() -> None:
    if _FORMATS:
        return
    from mapper.check.formats import jsonout, junit, markdown, sarif, text

    register("text", text.render)
    register("json", jsonout.render)
    register("markdown", markdown.render)
    register("sarif", sarif.render)
    register("junit", junit.render)
