"""The Ask page and ``/api/ask``: a question, an answer, and the citations behind it.

Backend: the map's hybrid search (exact code names, then vector similarity) through
:meth:`web.data.MapData.search`, until ``mapper.agent`` is on main. The answer lists the
places that match, each cited with its location and an excerpt with the line highlighted;
when a matching scenario walks the stack, its steps are the answer's outline.
"""

from __future__ import annotations

from typing import Any

from web.data import MapData
from web.errors import BadRequest

MAX_QUESTION = 500
BACKEND = "hybrid search (mapper.search): exact code names, then vector similarity"


def ask(data: MapData, question: str, role: str | None = None, limit: int = 8) -> dict[str, Any]:
    question = " ".join(question.split())
    if not question:
        raise BadRequest("ask a question, e.g. 'what changes to add a quantize op'")
    if len(question) > MAX_QUESTION:
        raise BadRequest(f"a question is at most {MAX_QUESTION} characters", length=len(question))
    hits = data.search(question, limit=limit)
    if role is not None:
        mine = set(data.role(role, changes=False)["role"]["layers"])
        hits.sort(key=lambda h: h["layer"] not in mine)  # stable: the role's layers first
    citations = []
    for n, hit in enumerate(hits, 1):
        citations.append({"n": n, **hit, "excerpt": data.excerpt(hit["path"], hit["line"])})
    scenario, steps = _scenario(data, citations)
    return {
        "question": question,
        "role": role,
        "intent": "search",
        "backend": BACKEND,
        "answer": _summary(citations, scenario, steps),
        "citations": citations,
        "scenario": scenario["id"] if scenario else None,
        "steps": steps,
        "nodes": [c["id"] for c in citations],
    }


def _scenario(
    data: MapData, citations: list[dict[str, Any]]
) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    """The first cited scenario, or the scenario a cited doc section describes, with its
    steps in order."""
    for c in citations:
        found = [c["id"]] if c["kind"] == "scenario" else []
        if c["kind"] == "doc":  # the section, or the page holding it, describes a scenario
            edges = data.neighbours(c["id"])
            pages = [c["id"]] + [e["source"] for e in edges["in"] if e["kind"] == "contains"]
            found = [
                e["target"]
                for page in pages
                for e in data.neighbours(page)["out"]
                if e["kind"] == "describes" and e["target"].startswith("scenario:")
            ]
        if found:
            scenario_id, attrs = data.node_record(found[0])
            steps = sorted(attrs.get("steps") or [], key=lambda s: s.get("order", 0))
            return {**c, "id": scenario_id, "name": attrs.get("name")}, steps
    return None, []


def _summary(
    citations: list[dict[str, Any]], scenario: dict[str, Any] | None, steps: list[dict[str, Any]]
) -> str:
    if not citations:
        return "Nothing on the map matches this question."
    top = citations[0]
    text = (
        f"{len(citations)} places on the map match; the closest is {top['name']} "
        f"({top['kind']}{', layer ' + top['layer'] if top['layer'] else ''}) [{top['n']}]."
    )
    if scenario is not None:
        text += (
            f" The scenario {scenario['name']} [{scenario['n']}] walks the stack in "
            f"{len(steps)} steps, listed below."
        )
    return text
