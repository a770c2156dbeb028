"""Intent classification for the deterministic default: patterns first, then the offline
MiniLM embeddings against a few example questions per intent.

Patterns catch the unambiguous phrasings ("what breaks if", "add a … op"); the embeddings
rank the rest by cosine similarity to the examples. A question about something the map does
not record (owners, dates, power, prices, plans) is :data:`Intent.UNKNOWN` whatever it names.
The example vectors are computed once per process. Thread-compatible.
"""

from __future__ import annotations

import functools
import re

import numpy as np

from mapper.agent.records import Intent

#: What the map does not record: people, history, physical figures, money, plans, opinions.
OUT_OF_SCOPE = re.compile(
    r"\b(who (?:owns|wrote|maintains|is responsible for reviewing)|owner|on-?call|maintainer|"
    r"team lead|when was|what year|release date|roadmap|next release|power (?:draw|consumption)|"
    r"watts?|temperature|price|cost in|licen[cs]e fee|salary|opinion|best gpu to buy|"
    r"how many engineers|weather)\b",
    re.IGNORECASE,
)

_PATTERNS: tuple[tuple[Intent, re.Pattern[str]], ...] = (
    (
        Intent.MAP_VS_CODE,
        re.compile(
            r"\b(map (?:and|vs\.?|versus) (?:the )?code|agree with the code|drift|stale|holes?|"
            r"does the (?:map|doc|contract)\w* (?:match|agree)|map say|code say|declared|"
            r"observed)\b",
            re.I,
        ),
    ),
    (
        Intent.NEW_OP,
        re.compile(
            r"\b(add|adding|onboard\w*|new|support|introduce)\b.{0,40}\b(op|operator|operation)s?\b",
            re.I,
        ),
    ),
    (
        Intent.IMPACT,
        re.compile(
            r"\b(what breaks|break\w*|impact\w*|affect\w*|if (?:i|we) (?:change|rename|remove)|"
            r"depends? on|who (?:uses|calls|consumes)|changing)\b",
            re.I,
        ),
    ),
    (
        Intent.PERFORMANCE,
        re.compile(
            r"\b(slow\w*|fast\w*|bottleneck|latency|throughput|performance|speed|profil\w*)\b", re.I
        ),
    ),
    (
        Intent.ERRORS,
        re.compile(
            r"\b(error|errors|fault\w*|fail\w*|recover\w*|exception|raise[sd]?|hang\w*|timeout|"
            r"ecc|reset)\b",
            re.I,
        ),
    ),
    (
        Intent.ROLE,
        re.compile(
            r"\b(as an? \w+ engineer|(compiler|runtime|driver) engineer|my role|role view|"
            r"should i (?:know|read))\b",
            re.I,
        ),
    ),
    (
        Intent.EXPLAIN_PATH,
        re.compile(
            r"\b(path|walk|how does .+ (?:reach|get to|go to|flow)|from .+ (?:down )?to|"
            r"end to end|through the (?:stack|layers)|between|interfaces? (?:does|do|of|from))\b",
            re.I,
        ),
    ),
    (
        Intent.LOCATE,
        re.compile(
            r"\b(responsib\w*|synchronous|asynchronous|synchronis\w*|synchroniz\w*|where|"
            r"which (?:component|layer|file|module|function|class|ioctl)|who (?:frees|"
            r"decides|owns the)|what is|what does|defined|implemented|lives?)\b",
            re.I,
        ),
    ),
)

_EXAMPLES: dict[Intent, tuple[str, ...]] = {
    Intent.LOCATE: (
        "where is this implemented",
        "which component does this",
        "where does the decision get made",
        "what is this function",
    ),
    Intent.EXPLAIN_PATH: (
        "how does a request travel from the top layer to the bottom",
        "walk this operation down the stack",
        "what connects these two",
    ),
    Intent.IMPACT: (
        "what breaks if I change this interface",
        "who depends on this",
        "what is affected by modifying this function",
    ),
    Intent.NEW_OP: ("what changes to add a new operator", "how do I support a new op"),
    Intent.ERRORS: (
        "what happens when the device faults",
        "how are errors recovered",
        "which error is raised when memory is freed too early",
    ),
    Intent.PERFORMANCE: (
        "why is my model slow",
        "where is the bottleneck",
        "how to measure latency",
    ),
    Intent.ROLE: ("what should a driver engineer look at", "show me the compiler engineer view"),
    Intent.MAP_VS_CODE: (
        "does the documentation agree with the code",
        "where is the map out of date",
    ),
}


def pattern_intent(question: str) -> Intent | None:
    """The first intent whose pattern matches, in priority order; None when none does."""
    if OUT_OF_SCOPE.search(question):
        return Intent.UNKNOWN
    for intent, pattern in _PATTERNS:
        if pattern.search(question):
            return intent
    return None


@functools.cache
def _example_matrix() -> tuple[tuple[Intent, ...], np.ndarray]:
    from mapper.embeddings import default_embedder

    labels = tuple(i for i, texts in _EXAMPLES.items() for _ in texts)
    texts = [t for texts in _EXAMPLES.values() for t in texts]
    return labels, default_embedder().embed(texts)


def embedding_intent(question: str) -> tuple[Intent, float]:
    """The intent of the nearest example question and its cosine similarity."""
    from mapper.embeddings import default_embedder

    labels, matrix = _example_matrix()
    vector = default_embedder().embed([question[:2000]])[0]
    scores = matrix @ vector
    best = int(np.argmax(scores))
    return labels[best], float(scores[best])


def classify(question: str) -> tuple[Intent, str]:
    """(intent, how it was decided: "pattern" or "embedding")."""
    found = pattern_intent(question)
    if found is not None:
        return found, "pattern"
    intent, _ = embedding_intent(question)
    return intent, "embedding"
