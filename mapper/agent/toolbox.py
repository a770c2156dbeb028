"""The agent's tool machinery: a registry of tools and the :class:`Toolbox` that runs them.

Each tool is registered with :func:`register` under a name, with a pydantic model for its
arguments and a function ``(toolbox, args) -> (data, citations)`` (the tools themselves are in
:mod:`mapper.agent.tools`). A :class:`Toolbox` runs them on one
:class:`~mapper.agent.mapview.MapView`, recording every call and every citation a tool
returned — the only citations an answer may carry. Synchronous; one toolbox per question.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from mapper.agent.mapview import MapView
from mapper.agent.records import Citation, ToolCall
from mapper.errors import MapperError, UnknownNameError
from mapper.model import Node, NodeKind

Result = tuple[dict[str, Any], list[Citation]]


class ToolError(MapperError):
    """A tool was called with arguments it cannot use (unknown node, bad values)."""


@dataclass(frozen=True, slots=True)
class ToolSpec:
    name: str
    description: str
    args: type[BaseModel]
    run: Callable[[Toolbox, Any], Result]


_REGISTRY: dict[str, ToolSpec] = {}


def register(spec: ToolSpec) -> ToolSpec:
    _REGISTRY[spec.name] = spec
    return spec


def spec(name: str) -> ToolSpec:
    if name not in _REGISTRY:
        raise UnknownNameError("tool", name, list(_REGISTRY))
    return _REGISTRY[name]


def specs() -> list[ToolSpec]:
    return list(_REGISTRY.values())


class Toolbox:
    """Runs tools on one map view and keeps what they returned. A chat model may run several
    tool calls of one turn at once: recording is locked."""

    def __init__(self, view: MapView) -> None:
        self.view = view
        self.calls: list[ToolCall] = []
        self.returned: dict[tuple[str, int], Citation] = {}
        self._lock = threading.Lock()

    def resolve(self, raw: str) -> Node:
        """A node from its id, or from a name that names one node (``umd_kmd.free``)."""
        node = self.view.node(raw)
        if node is not None:
            return node
        for kind in NodeKind:
            node = self.view.node(f"{kind.value}:{raw}")
            if node is not None:
                return node
        raise ToolError(f"no node {raw!r} on the map; use search to find one", node=raw)

    def run(self, name: str, **kwargs: Any) -> dict[str, Any]:
        """Run a tool; its data with ``citations`` (``path:line`` strings) added."""
        tool = spec(name)
        try:
            args = tool.args(**kwargs)
        except ValidationError as exc:
            raise ToolError(f"bad arguments for {name}: {exc.errors()[0]['msg']}") from exc
        start = time.perf_counter()
        data, cites = tool.run(self, args)
        unique: dict[tuple[str, int], Citation] = {}
        for c in cites:
            unique.setdefault((c.path, c.line), c)
        ms = (time.perf_counter() - start) * 1000
        summary = data.pop("_summary", "") or f"{len(unique)} citations"
        call = ToolCall(name, tuple(sorted(args.model_dump().items())), summary, ms, len(unique))
        with self._lock:
            self.returned.update({k: v for k, v in unique.items() if k not in self.returned})
            self.calls.append(call)
        return {**data, "citations": [c.where for c in unique.values()]}

    def run_json(self, name: str, **kwargs: Any) -> str:
        """:meth:`run` as compact JSON; a tool error becomes ``{"error": ...}``."""
        try:
            return json.dumps(self.run(name, **kwargs), separators=(",", ":"), default=str)
        except MapperError as exc:
            return json.dumps({"error": str(exc)})
