"""Entity linking: the nodes of the map a question names.

Names are matched, not guessed: a code-like token (``umd_kmd.free``, ``KmdDevice.alloc``,
``MemoryInUseError``, ``stack/kmd/memory.py``) against node ids and qualified names (full,
suffix, or last segment); runs of plain words, lightly stemmed, against the last segment of
component and interface names (``creates a queue`` → ``create_queue``, ``memory plan`` →
``memory_plan``) and against layer ids and names. The name index is built once per map view.
"""

from __future__ import annotations

import re
import weakref
from collections import defaultdict
from dataclasses import dataclass, field

from mapper.agent.citations import tail
from mapper.agent.mapview import MapView
from mapper.agent.records import Entity

_CODE = re.compile(r"`([^`]+)`|([A-Za-z_][\w./:\-]*[\w])")
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    {
        "a", "an", "the", "its", "it", "their", "of", "on", "to", "in", "into", "for", "and",
        "or", "by", "with", "is", "are", "be", "does", "do", "what", "which", "who", "how",
        "where", "when", "why", "i", "we", "my", "our", "this", "that", "from", "at", "as",
        "if", "change", "changes",
    }
)  # fmt: skip
_TEXT = ("name", "description", "text", "doc", "title", "synchronization", "errors", "memory")
_KINDS = ("layer", "component", "interface", "scenario", "symbol", "file")


def stem(word: str) -> str:
    if word.endswith(("ses", "xes", "ches", "shes")):
        return word[:-2]
    for suffix in ("ing", "ed", "s"):
        if word.endswith(suffix) and not word.endswith("ss") and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def _code_like(token: str) -> bool:
    mixed_case = any(c.isupper() for c in token[1:]) and not token.isupper()  # CamelCase
    return any(c in token for c in "._:/") or mixed_case or (token.isupper() and "_" in token)


def words_of(text: str) -> set[str]:
    """The stemmed content words of a text."""
    return {stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP and len(w) > 2}


@dataclass
class _Index:
    exact: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    suffix_tail: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    phrase: dict[str, set[str]] = field(default_factory=lambda: defaultdict(set))
    vocabulary: set[str] = field(default_factory=set)


_INDEXES: weakref.WeakKeyDictionary[MapView, _Index] = weakref.WeakKeyDictionary()


def _phrase(text: str) -> str:
    return "_".join(stem(w) for w in _WORD.findall(text.lower()) if w not in _STOP)


def _index(view: MapView) -> _Index:
    found = _INDEXES.get(view)
    if found is not None:
        return found
    idx = _Index()
    written: set[str] = set()  # every word of the map's text, stemmed once each below
    for node in view.nodes():
        attrs = node.attrs
        text = " ".join([str(value) for key in _TEXT if (value := attrs.get(key))])
        written.update(_WORD.findall(f"{text} {node.id.replace('_', ' ')}".lower()))
        if node.kind not in _KINDS:
            continue
        bare = node.id.split(":", 1)[1].lower()
        idx.exact[bare].add(node.id)
        idx.exact[node.name.lower()].add(node.id)
        if node.kind in ("symbol", "file"):
            idx.suffix_tail[tail(bare)].add(node.id)
        if node.kind in ("component", "interface"):
            if node.kind == "component" or "_" in tail(node.name):
                idx.phrase[_phrase(tail(node.name))].add(node.id)
            idx.phrase[_phrase(node.name)].add(node.id)
        if node.kind == "layer":
            idx.phrase[_phrase(bare)].add(node.id)
            idx.phrase[_phrase(node.name)].add(node.id)
            idx.phrase[_phrase(node.name.removesuffix(" shim"))].add(node.id)
    idx.vocabulary = {stem(w) for w in written if w not in _STOP and len(w) > 2}
    _INDEXES[view] = idx
    return idx


def link(view: MapView, question: str, limit: int = 8) -> list[Entity]:
    """The nodes the question names, best first (ties: layers, components, interfaces first)."""
    idx = _index(view)
    scores: dict[str, tuple[float, str]] = {}

    def put(node_id: str, score: float, matched: str) -> None:
        if scores.get(node_id, (0.0, ""))[0] < score:
            scores[node_id] = (score, matched)

    for m in _CODE.finditer(question):
        token = (m.group(1) or m.group(2)).strip().rstrip("().,;:?")
        low = token.lower()
        if not (m.group(1) or _code_like(token)):
            continue
        for node_id in idx.exact.get(low, ()):
            put(node_id, 1.0, token)
        for node_id in idx.suffix_tail.get(tail(low), ()):
            name = node_id.split(":", 1)[1].lower()
            qualified = any(sep in low for sep in (".", "::", "/"))
            put(node_id, 0.95 if qualified and name.endswith(low) else 0.7, token)
    words = [(w, stem(w)) for w in _WORD.findall(question.lower()) if w not in _STOP]
    for n in (3, 2, 1):
        for i in range(len(words) - n + 1):
            key = "_".join(s for _, s in words[i : i + n])
            for node_id in idx.phrase.get(key, ()):
                base = 0.9 if n > 1 else 0.6
                if node_id.startswith("layer:"):
                    base = 0.8
                put(node_id, base, " ".join(w for w, _ in words[i : i + n]))
    order = {k: i for i, k in enumerate(_KINDS)}
    ranked = sorted(
        scores.items(), key=lambda kv: (-kv[1][0], order.get(kv[0].split(":", 1)[0], 9), kv[0])
    )
    out: list[Entity] = []
    for node_id, (score, matched) in ranked[:limit]:
        node = view.node(node_id)
        if node is not None:
            out.append(Entity(node.id, node.kind, node.name, node.layer, matched, score))
    return out


def coverage(view: MapView, question: str) -> float:
    """The share of the question's content words that the map's text uses at all."""
    asked = words_of(question) - _QUESTION_WORDS
    if not asked:
        return 0.0
    vocabulary = _index(view).vocabulary
    return sum(1 for w in asked if w in vocabulary) / len(asked)


_QUESTION_WORDS = frozenset(
    {
        "get",
        "decided",
        "decide",
        "look",
        "find",
        "show",
        "tell",
        "know",
        "explain",
        "happen",
        "there",
        "any",
        "about",
        "stack",
        "map",
    }
)


_KIND_WORDS = frozenset(
    {
        "component",
        "layer",
        "interface",
        "function",
        "file",
        "module",
        "class",
        "method",
        "code",
        "part",
    }
)


def content_query(question: str) -> str:
    """The question's content words (no question or kind words), for a lexical search."""
    words = [
        w
        for w in _WORD.findall(question.lower())
        if w not in _STOP and w not in _KIND_WORDS and w not in _QUESTION_WORDS
    ]
    return " ".join(words) or question
