"""The agent's tools as langchain tools: one ``StructuredTool`` per registered tool, with its
pydantic argument model as the schema; each call runs on the question's toolbox and returns
compact JSON (a tool error comes back as ``{"error": ...}`` for the model to read)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from langchain_core.tools import BaseTool, StructuredTool

from mapper.agent.tools import Toolbox, specs


def as_tools(box: Toolbox) -> list[BaseTool]:
    """Every registered tool bound to ``box`` (its calls and citations are recorded there)."""
    return [
        StructuredTool.from_function(
            func=_bound(box, spec.name),
            name=spec.name,
            description=spec.description,
            args_schema=spec.args,
        )
        for spec in specs()
    ]


def _bound(box: Toolbox, name: str) -> Callable[..., str]:
    def call(**kwargs: Any) -> str:
        return box.run_json(name, **kwargs)

    call.__name__ = name
    return call
