"""YAML loading that remembers the line of every mapping (for ``path:line`` errors).

Hostile YAML is refused before anything is built from it: a document over
:data:`MAX_YAML_BYTES`, one whose aliases expand to more than :data:`MAX_YAML_NODES` nodes (a
"billion laughs" document of a few hundred bytes expands to billions) and a mapping that
repeats a key (YAML says keys are unique; the stock loader silently keeps the last one).
"""

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

#: The largest YAML document (contract, front matter, baseline) the map reads, in bytes.
MAX_YAML_BYTES = 1 << 20
#: The most nodes a document may hold once every alias is expanded.
MAX_YAML_NODES = 200_000

_STR = "tag:yaml.org,2002:str"


class _Refused(Exception):
    """Hostile YAML: ``problem`` says why, ``line`` (0-based) where."""

    def __init__(self, problem: str, line: int) -> None:
        super().__init__(problem)
        self.problem = problem
        self.line = line


def _expanded_size(node: yaml.Node, sizes: dict[int, int], busy: set[int]) -> int:
    """Nodes in ``node`` with every alias expanded, counted once per distinct node (linear
    in the composed document, however far the aliases would expand); raises _Refused above
    :data:`MAX_YAML_NODES`, and on a mapping that repeats a plain key."""
    key = id(node)
    if key in sizes:
        return sizes[key]
    if key in busy:  # a recursive alias: the constructor builds it as a cycle, not a tree
        return 1
    busy.add(key)
    total = 1
    if isinstance(node, yaml.SequenceNode):
        for item in node.value:
            total += _expanded_size(item, sizes, busy)
            if total > MAX_YAML_NODES:
                break
    elif isinstance(node, yaml.MappingNode):
        seen: set[str] = set()
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode) and k.tag == _STR:
                if k.value in seen and k.value != "<<":
                    raise _Refused(f"duplicate key {k.value!r}", k.start_mark.line)
                seen.add(k.value)
            total += _expanded_size(k, sizes, busy) + _expanded_size(v, sizes, busy)
            if total > MAX_YAML_NODES:
                break
    busy.discard(key)
    if total > MAX_YAML_NODES:
        raise _Refused(
            f"aliases expand to more than {MAX_YAML_NODES} nodes (refused unread)",
            node.start_mark.line,
        )
    sizes[key] = total
    return total


def _load(text: str) -> Any:
    if len(text) > MAX_YAML_BYTES:
        raise _Refused(f"document of {len(text)} characters > {MAX_YAML_BYTES}", 0)
    loader = _Loader(text)
    try:
        node = loader.get_single_node()
        if node is None:
            return None
        _expanded_size(node, {}, set())
        return loader.construct_document(node)
    finally:
        loader.dispose()


def load(text: str, *, path: str, error: type[MapperError], first_line: int = 1) -> Any:
    """Parse YAML; mappings come back as :class:`LineDict` with lines offset by ``first_line``.

    Raises ``error`` (with path and line) on a YAML syntax error, a repeated key, a document
    over :data:`MAX_YAML_BYTES` or aliases expanding past :data:`MAX_YAML_NODES`.
    """
    try:
        data = _load(text)  # yaml.load with the caps above
    except _Refused as exc:
        raise error(f"invalid YAML: {exc.problem}", path=path, line=exc.line + first_line) from exc
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
