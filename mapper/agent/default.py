"""The deterministic default: classify, link entities, run the tools, fill the intent's
template; when nothing fits, say the map does not know and show the nearest things it has."""

from __future__ import annotations

from mapper.agent import compose
from mapper.agent.entities import link
from mapper.agent.intent import classify
from mapper.agent.records import Citation, Entity, Intent
from mapper.agent.tools import Toolbox
from mapper.config import RoleConfig

_NOT_RECORDED = (
    "The map does not know: it records layers, components, interfaces, scenarios, code, docs and "
    "tests of this stack — not owners, dates, physical figures, prices or plans."
)


def unknown(d: compose.Draft, question: str, reason: str) -> None:
    d.lines.clear()
    d.cited.clear()
    d.say(reason)
    hits = [h for h in d.box.run("search", query=question[:2000], limit=4)["hits"]]
    if hits:
        d.say("Nearest things it has:")
        for h in hits:
            d.say(f"- {h['id']} ({h['kind']}){d.cite(h.get('where'))}")


def answer(
    box: Toolbox, question: str, role: RoleConfig | None, foreign_script: bool
) -> tuple[str, Intent, list[Entity], list[Citation], bool]:
    """(text, intent, entities, citations, known) for one question."""
    intent, _how = classify(question)
    entities = link(box.view, question)
    if foreign_script and not entities:
        intent = Intent.UNKNOWN
    d = compose.Draft(box, role)
    known = False
    if intent is Intent.UNKNOWN:
        reason = _NOT_RECORDED
        if foreign_script:
            reason = (
                "The map does not know how to read this question: the default path "
                "understands English and the map's own names (ids, code names)."
            )
        unknown(d, question, reason)
    else:
        known = compose.TEMPLATES[intent](d, question, entities)
        if not known and intent is not Intent.LOCATE:
            known = compose.locate(d, question, entities)
        if not known:
            unknown(
                d,
                question,
                f"The map does not know enough to answer this ({intent.value} "
                "question: no matching node, path or scenario on the map).",
            )
    return "\n".join(d.lines), intent, entities, list(d.cited.values()), known
