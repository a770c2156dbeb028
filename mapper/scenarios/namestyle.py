"""How a new module's file name spells the new op: its words joined or split, as the place it
goes spells the similar op.

An op of several words is spelt split in some places (``max_pool``, ``GATHER_ND``,
``GatherND``) and joined in others (``MAXPOOL``, ``maxpool.opdesc.json``). A new module
named after the new op follows its place:

- a sibling of a module named after the similar op spells the new op as that module's name
  spells the similar op (``maxpool.opdesc.json`` → ``maxunpool.opdesc.json``,
  ``gather_nd.opdesc.json`` → ``scatter_nd.opdesc.json``);
- a test module of a folder's one-module-per-op convention spells it as the similar op's own
  module there does, or, where the similar op has none, as the layer the folder's tests cover
  spells the similar op in most of its names (its vocabulary values and the definitions named
  after it: ``MAXPOOL``, ``maxpool`` in the KMD → ``test_conformance_maxunpool.py``; ``max_pool``
  in the adapter → ``test_max_unpool.py``).

A joined spelling says something only of an op the map also spells split somewhere: an op of
one word (``conv``, ``conv2d``) says nothing of how the new op's words go, and they are split
(snake case, :func:`~mapper.scenarios.newop_places.module_name`), as they are on a tie.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from collections.abc import Iterable

from mapper.impact.mapview import MapView
from mapper.model import EdgeKind, NodeKind
from mapper.scenarios import vocab

_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z]|\d|\b|_)|[A-Z]?[a-z]+|[A-Z]+|\d+")
_CAMEL = re.compile(r"[a-z][A-Z]")


def segment(name: str, spelt: set[str]) -> str | None:
    """The longest part of ``name``'s last component spelling the op (a run of its words whose
    compact form is one of ``spelt``), as written; None where none does."""
    last = name.rpartition(".")[2]
    found = [(m.start(), m.end()) for m in _WORD.finditer(last)]
    best: str | None = None
    for i in range(len(found)):
        for j in range(i + 1, min(len(found), i + 4) + 1):
            text = last[found[i][0] : found[j - 1][1]]
            if vocab.compact(text) in spelt and (best is None or len(text) > len(best)):
                best = text
    return best


def separated(text: str) -> bool:
    """Whether ``text`` keeps word boundaries (``_``, or a capital after a small letter)."""
    return "_" in text or bool(_CAMEL.search(text))


class Spelling:
    """How the map spells the similar op: the names of its ``values`` and of the definitions
    named after it, by layer."""

    def __init__(self, view: MapView, values: Iterable[vocab.Value], spelt: set[str]) -> None:
        self.spelt = spelt
        nodes = [v.node for v in values] + [
            n for n in vocab.named_after(view, spelt) if n.kind is NodeKind.SYMBOL
        ]
        self.votes: dict[str | None, Counter[bool]] = {}
        for node in nodes:
            seg = segment(vocab.short_name(node), spelt)
            if seg is not None:
                layer = node.layer or view.config.layer_of(node.path or "")
                self.votes.setdefault(layer, Counter())[not separated(seg)] += 1
        self.informative = any(c[False] for c in self.votes.values())

    def joined_in(self, stem: str) -> bool | None:
        """Whether the file stem ``stem`` spells the similar op joined (True) or split (False);
        None where it does not spell it, or where no spelling on the map is split."""
        seg = segment(stem, self.spelt)
        if seg is None or not self.informative:
            return None
        return not separated(seg)

    def joined_by(self, layer: str | None) -> bool | None:
        """Whether most names of ``layer`` spell the similar op joined; None on a tie, for a
        layer without any, or where no spelling on the map is split."""
        counts = self.votes.get(layer) if layer is not None else None
        if not self.informative or not counts or counts[True] == counts[False]:
            return None
        return counts[True] > counts[False]


def stem(name: str, joined: bool | None, form: str) -> str:
    """The file stem of the new op ``name``: its compact ``form`` where the place spells the
    similar op joined, its words in snake case where split, and where nothing says either
    (the similar op is one word) :func:`~mapper.scenarios.vocab.module_stem`."""
    if joined:
        return form
    return vocab.snake(name) if joined is False else vocab.module_stem(name)


def covered_layer(view: MapView, folder: str) -> str | None:
    """The layer the tests of the modules directly in ``folder`` cover most (None for none)."""
    counts: Counter[str] = Counter()
    for test in view.nodes(NodeKind.TEST):
        if posixpath.dirname(test.path or "") != folder:
            continue
        for edge in view.neighbours(test.id, {EdgeKind.COVERS}, "out"):
            target = view.node(edge.target)
            if target is not None and target.kind is NodeKind.SYMBOL:
                layer = target.layer or view.config.layer_of(target.path or "")
                if layer:
                    counts[layer] += 1
    ranked = counts.most_common(2)
    if not ranked or (len(ranked) == 2 and ranked[0][1] == ranked[1][1]):
        return None
    return ranked[0][0]
