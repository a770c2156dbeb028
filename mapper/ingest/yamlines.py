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

_STR = "tag:yaml.org,2002:str"
_SEQ = "tag:yaml.org,2002:seq"
_MAP = yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG


def _construct(loader: _Loader, node: yaml.Node, memo: dict[int, Any]) -> Any:
    """What the stock constructor (with :func:`_mapping`) builds from ``node``, without its
    per-node generator machinery: plain strings, lists and :class:`LineDict` are built here,
    anything else (other scalars, merge keys, odd tags, recursion) goes to ``loader``."""
    tag = node.tag
    if tag == _STR and isinstance(node, yaml.ScalarNode):
        return node.value
    key = id(node)
    if key in memo:  # an alias: the same object, as the stock constructor shares it
        found = memo[key]
        return loader.construct_object(node, deep=True) if found is _BUSY else found
    if tag == _SEQ and isinstance(node, yaml.SequenceNode):
        memo[key] = _BUSY
        out: Any = [_construct(loader, item, memo) for item in node.value]
    elif tag == _MAP and isinstance(node, yaml.MappingNode) and _plain_keys(node):
        memo[key] = _BUSY
        out = LineDict({k.value: _construct(loader, v, memo) for k, v in node.value})
        out.line = node.start_mark.line + 1
    else:
        out = loader.construct_object(node, deep=True)
    memo[key] = out
    return out


_BUSY = object()


def _plain_keys(node: yaml.MappingNode) -> bool:
    return all(k.tag == _STR and isinstance(k, yaml.ScalarNode) for k, _ in node.value)


def _load(text: str) -> Any:
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        return None if node is None else _construct(loader, node, {})
    finally:
        loader.dispose()


def load(text: str, *, path: str, error: type[MapperError], first_line: int = 1) -> Any:
    """Parse YAML; mappings come back as :class:`LineDict` with lines offset by ``first_line``.

    Raises ``error`` (with path and line) on a YAML syntax error.
    """
    try:
        data = _load(text)  # what yaml.load(text, Loader=_Loader) gives
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
