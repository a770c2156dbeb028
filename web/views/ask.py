"""The Ask page and ``/api/ask``: a question, the map agent's answer (:mod:`mapper.agent`
through :meth:`web.data.MapData.ask`), and its citations, each with an excerpt of the cited
file with the cited line highlighted and a link to the node it names."""

from __future__ import annotations

from typing import Any

from web.data import MapData
from web.errors import BadRequest

MAX_QUESTION = 500


def ask(data: MapData, question: str, role: str | None = None) -> dict[str, Any]:
    question = " ".join(question.split())
    if not question:
        raise BadRequest("ask a question, e.g. 'what changes to add a quantize op'")
    if len(question) > MAX_QUESTION:
        raise BadRequest(f"a question is at most {MAX_QUESTION} characters", length=len(question))
    answer = data.ask(question, role)
    for n, citation in enumerate(answer["citations"], 1):
        citation["n"] = n
        citation["excerpt"] = data.excerpt(citation["path"], citation["line"])
    answer["nodes"] = sorted(
        {c["node"] for c in answer["citations"] if c["node"]}
        | {e["id"] for e in answer["entities"]}
    )
    return answer
