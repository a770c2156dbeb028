"""The map's agent: questions in words, answers that cite the map's sources.

``ask(question, role=None, map=root) -> Answer``. Tools (:mod:`mapper.agent.tools`) read the
map through :mod:`mapper.agent.mapview` only; the deterministic default
(:mod:`mapper.agent.default`) needs no model; a configured chat model
(:mod:`mapper.agent.llm`) calls the same tools and may cite only what they returned.
"""

from __future__ import annotations

from mapper.agent.ask import AskError, ask
from mapper.agent.records import Answer, Citation, CitationKind, Entity, Intent, ToolCall

__all__ = ["Answer", "AskError", "Citation", "CitationKind", "Entity", "Intent", "ToolCall", "ask"]
