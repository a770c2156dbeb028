"""``ask()``: one question in, one cited :class:`~mapper.agent.records.Answer` out.

The deterministic default runs unless a chat model is configured (``[agent]`` in
``stackmap.toml`` or ``STACKMAP_LLM_*`` in the environment). With a model, its tool calls run
the same tools and its citations are validated; when its endpoint cannot be reached the
default path answers and the answer carries a warning saying so. Every citation of every
answer is checked against the files before it is returned; one that does not check out is
removed and listed in ``dropped``.

Errors (typed, never a traceback): :class:`AskError` for an empty or over-long question,
UnknownNameError for an unknown role, StoreError (naming ``stackmap ingest``) when no map has
been built. Synchronous; safe to call from several threads (each call has its own toolbox).
"""

from __future__ import annotations

import time
import unicodedata
from pathlib import Path
from typing import Any

from mapper.agent import default
from mapper.agent.citations import validate
from mapper.agent.mapview import MapView, open_view, role_of
from mapper.agent.records import Answer, Citation, Entity
from mapper.agent.tools import Toolbox
from mapper.config import load_config
from mapper.errors import MapperError

MAX_QUESTION = 4000  # characters


class AskError(MapperError):
    """The question cannot be asked (empty, too long)."""


def _foreign_script(question: str) -> bool:
    letters = [c for c in question if c.isalpha()]
    if not letters:
        return False
    latin = sum(1 for c in letters if "LATIN" in unicodedata.name(c, ""))
    return latin / len(letters) < 0.5


def check_question(question: str) -> str:
    text = question.strip()
    if not text:
        raise AskError(
            'empty question; ask something about the map, e.g. "what changes to add a quantize op"'
        )
    if len(text) > MAX_QUESTION:
        raise AskError(
            f"question too long: {len(text)} characters, at most {MAX_QUESTION}",
            length=len(text),
            limit=MAX_QUESTION,
        )
    return text


def _order(
    view: MapView, role_layers: tuple[str, ...], cites: list[Citation], entities: list[Entity]
) -> tuple[list[Citation], list[Entity]]:
    def rank(layer: str | None) -> int:
        return role_layers.index(layer) if layer in role_layers else len(role_layers)

    def layer_of(c: Citation) -> str | None:
        node = view.node(c.node) if c.node else None
        return node.layer if node else view.config.layer_of(c.path)

    return (
        sorted(cites, key=lambda c: rank(layer_of(c))),
        sorted(entities, key=lambda e: rank(e.layer)),
    )


def ask(
    question: str,
    *,
    role: str | None = None,
    map: Path | MapView | None = None,
    model: Any = None,
) -> Answer:
    """Answer ``question`` from the map of ``map`` (a repository root, an open view, or the
    current directory); ``role`` (a role id from the config) puts its layers first; ``model``
    (a langchain chat model with tool calling) replaces the configured one."""
    start = time.perf_counter()
    text = check_question(question)
    if isinstance(map, MapView):
        view = map
        role_cfg = view.role(role) if role is not None else None
    else:
        root = Path(map or ".")
        config = load_config(root)
        role_cfg = role_of(config, role) if role is not None else None
        view = open_view(root, config)
    box = Toolbox(view)
    warnings: list[str] = []
    foreign = _foreign_script(text)
    if foreign:
        warnings.append(
            "the question is not in English; the default path matches only the map's names in it"
        )
    from mapper.agent.llm import model_answer

    modelled = model_answer(box, text, role_cfg, warnings, model)
    if modelled is not None:
        body, intent, entities, cites, known, dropped = modelled
        mode = "model"
    else:
        body, intent, entities, cites, known = default.answer(box, text, role_cfg, foreign)
        dropped, mode = [], "default"
    kept: list[Citation] = []
    for c in cites:
        problem = validate(view.root, c)
        if problem is None:
            kept.append(c)
        else:
            dropped.append(problem)
    if role_cfg is not None:
        kept, entities = _order(view, role_cfg.layers, kept, entities)
    return Answer(
        question=text,
        answer=body,
        intent=intent,
        entities=tuple(entities),
        citations=tuple(kept),
        tool_calls=tuple(box.calls),
        latency_ms=(time.perf_counter() - start) * 1000,
        known=known,
        role=role,
        mode=mode,
        warnings=tuple(warnings),
        dropped=tuple(dropped),
    )
