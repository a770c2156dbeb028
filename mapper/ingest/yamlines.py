"""YAML loading that remembers the line of every mapping (for ``path:line`` errors)."""

from __future__ import annotations

from typing import Any

import yaml

from mapper.errors import MapperError


class LineDict(dict[str, Any]):
    """A YAML mapping that knows the 1-based line it starts on."""

    line: int = 0


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # type: ignore[misc]
    pass


def _mapping(loader: _Loader, node: yaml.MappingNode) -> LineDict:
    out = LineDict({str(k): v for k, v in loader.construct_mapping(node, deep=True).items()})
    out.line = node.start_mark.line + 1
    return out


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _mapping)


def load(text: str, *, path: str, error: type[MapperError], first_line: int = 1) -> Any:
    """Parse YAML; mappings come back as :class:`LineDict` with lines offset by ``first_line``.

    Raises ``error`` (with path and line) on a YAML syntax error.
    """
    try:
        data = yaml.load(text, Loader=_Loader)  # a SafeLoader subclass: no arbitrary objects
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        line = mark.line + first_line if mark is not None else None
        problem = getattr(exc, "problem", None) or str(exc)
        raise error(f"invalid YAML: {problem}", path=path, line=line) from exc
    if first_line != 1:
        _shift(data, first_line - 1)
    return data


def _shift(data: Any, offset: int) -> None:
    if isinstance(data, LineDict):
        data.line += offset
        for value in data.values():
            _shift(value, offset)
    elif isinstance(data, list):
        for value in data:
            _shift(value, offset)


def line_of(data: Any, default: int | None = None) -> int | None:
    return data.line if isinstance(data, LineDict) else default
