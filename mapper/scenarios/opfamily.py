"""Which vocabularies name operators, and which of their values name the same operator.

Derived from the map, not from a list of op names:

- Two values of different vocabularies *name the same thing* when they are spelt alike (the
  same compact token) or when code maps one onto the other: a line that cites exactly one
  value of each of two vocabularies (a table entry ``ExecOp.CONV2D: OpKind.CONV2D``, a
  registration ``register(OpType.CONV, Lowering(ExecOp.CONV2D, …))``), and no other value of
  either vocabulary is ever paired with them that way (a many-to-one mapping — many IR ops
  onto one generic kernel — joins nothing).
- Two vocabularies are *kin* when at least half the values of the smaller name the same thing
  in the other (and at least two do). The *op vocabularies* are the kin groups of two or more
  vocabularies in which some value is a registry key (``@register(OpType.X)``): registries
  are keyed by the ops the layers implement, not by data types or fault kinds, which form kin
  groups of their own.
- A vocabulary C code switches on (``case`` labels of its values in two files or more) with
  half its values implemented is an op vocabulary on its own, and each of its values an op:
  ggml's ``enum ggml_op``, which the backends dispatch on, and which no backend's enum repeats.
- An *op* is a group of values of op vocabularies naming the same thing, across at least two
  vocabularies or in one that code dispatches on; it is known by the token most of its values
  spell.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable

from mapper.impact.mapview import MapView
from mapper.model import EdgeKind, NodeKind
from mapper.scenarios.vocab import Value, compact, runs, short_name, spellings, vocabularies

_CITING = frozenset({EdgeKind.REFERENCES, EdgeKind.REGISTERS})
DISPATCHING = 2  # files switching on a lone vocabulary's values, to be a vocabulary of ops


class _Union:
    def __init__(self) -> None:
        self.parent: dict[str, str] = {}

    def find(self, x: str) -> str:
        self.parent.setdefault(x, x)
        while self.parent[x] != x:
            self.parent[x] = self.parent[self.parent[x]]
            x = self.parent[x]
        return x

    def join(self, a: str, b: str) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def mapped_pairs(view: MapView, values: Iterable[Value]) -> set[tuple[str, str]]:
    """Value node id pairs (sorted) that code maps one-to-one across two vocabularies."""
    by_line: dict[tuple[str, int], dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for value in values:
        for edge in view.neighbours(value.node.id, _CITING, "in"):
            ev = view.citation(edge)
            if ev.path and ev.line:
                by_line[(ev.path, ev.line)][value.vocabulary].add(value.node.id)
    partners: dict[tuple[str, str], set[str]] = defaultdict(set)  # (value, other vocab) → ids
    vocab_of: dict[str, str] = {}
    for groups in by_line.values():
        single = {voc: next(iter(ids)) for voc, ids in groups.items() if len(ids) == 1}
        for voc, ids in groups.items():
            for vid in ids:
                vocab_of[vid] = voc
        for voc_a, a in single.items():
            for voc_b, b in single.items():
                if voc_a != voc_b:
                    partners[(a, voc_b)].add(b)
    pairs = set()
    for (a, _voc_b), found in partners.items():
        if len(found) != 1:
            continue
        b = next(iter(found))
        if partners.get((b, vocab_of[a])) == {a}:
            pairs.add((min(a, b), max(a, b)))
    return pairs


def _kin_groups(
    vocabs: dict[str, list[Value]], links: set[tuple[str, str]], vocab_of: dict[str, str]
) -> list[set[str]]:
    shared: Counter[tuple[str, str]] = Counter()
    for a, b in links:
        va, vb = vocab_of[a], vocab_of[b]
        if va != vb:
            shared[(min(va, vb), max(va, vb))] += 1
    kin = _Union()
    for (va, vb), count in shared.items():
        if count >= max(2, min(len(vocabs[va]), len(vocabs[vb])) / 2):
            kin.join(va, vb)
    groups: dict[str, set[str]] = defaultdict(set)
    for voc in vocabs:
        groups[kin.find(voc)].add(voc)
    return list(groups.values())


def _same_thing(
    view: MapView, vocabs: dict[str, list[Value]]
) -> tuple[set[tuple[str, str]], dict[str, str]]:
    """Links between values naming the same thing, and each value's vocabulary."""
    values = [v for vs in vocabs.values() for v in vs]
    vocab_of = {v.node.id: v.vocabulary for v in values}
    by_token: dict[str, list[Value]] = defaultdict(list)
    for v in values:
        by_token[v.token].append(v)
    links = set(mapped_pairs(view, values))
    for group in by_token.values():
        for a in group:
            for b in group:
                if a.vocabulary < b.vocabulary:
                    links.add((min(a.node.id, b.node.id), max(a.node.id, b.node.id)))
    return links, vocab_of


def _implemented(view: MapView, value: Value) -> bool:
    """A registry is keyed by ``value``, or a definition spelt after it names it."""
    for edge in view.neighbours(value.node.id, _CITING, "in"):
        if edge.kind is EdgeKind.REGISTERS:
            return True
        user = view.node(edge.source)
        if (
            user is not None
            and user.kind is NodeKind.SYMBOL
            and value.token in runs(short_name(user))
        ):
            return True
    return False


def op_vocabularies(view: MapView) -> dict[str, list[Value]]:
    """The vocabularies naming operators (see the module docstring), id → values."""
    return _op_vocabularies(view)[0]


def _op_vocabularies(view: MapView) -> tuple[dict[str, list[Value]], set[str]]:
    """The op vocabularies, and those of them that code dispatches on (:func:`_dispatched`),
    each vocabulary tested once."""
    vocabs = vocabularies(view)
    links, vocab_of = _same_thing(view, vocabs)
    out: dict[str, list[Value]] = {}
    dispatched: set[str] = set()
    for group in _kin_groups(vocabs, links, vocab_of):
        implemented = sum(1 for voc in group for v in vocabs[voc] if _implemented(view, v))
        if len(group) >= 2 and implemented < 2:
            continue
        switched = {voc for voc in group if _dispatched(view, vocabs[voc])}
        if len(group) >= 2 or switched:
            out.update({voc: vocabs[voc] for voc in sorted(group)})
            dispatched |= switched
    return out, dispatched


def _dispatched(view: MapView, values: list[Value]) -> bool:
    """A vocabulary that C code dispatches on as ops: ``case`` labels of its values in
    :data:`DISPATCHING` files at least, and half its values implemented (:func:`_implemented`):
    ggml's ``enum ggml_op``, which no backend's enum repeats value for value."""
    files: set[str] = set()
    for v in values:
        for edge in view.neighbours(v.node.id, {EdgeKind.REFERENCES}, "in"):
            if edge.attrs.get("binding") == "enum_case":
                files.add(view.citation(edge).path or "")
    if len(files - {""}) < DISPATCHING:
        return False
    return 2 * sum(1 for v in values if _implemented(view, v)) >= len(values)


def ops(view: MapView) -> dict[str, list[Value]]:
    """Op token → the values naming that op, for ops named by at least two vocabularies or by
    one that code dispatches on (:func:`_dispatched`)."""
    vocabs, dispatched = _op_vocabularies(view)
    links, _ = _same_thing(view, vocabs)
    same = _Union()
    for a, b in links:
        same.join(a, b)
    groups: dict[str, list[Value]] = defaultdict(list)
    for values in vocabs.values():
        for v in values:
            groups[same.find(v.node.id)].append(v)
    out: dict[str, list[Value]] = {}
    for values in groups.values():
        named_by = {v.vocabulary for v in values}
        if len(named_by) < 2 and not named_by <= dispatched:
            continue
        if len(named_by) < 2 and not all(_implemented(view, v) for v in values):
            continue  # a dispatched vocabulary's sentinel (GGML_OP_COUNT) is no op
        counts = Counter(v.token for v in values)
        token = min(counts, key=lambda t: (-counts[t], len(t), t))
        out[token] = sorted(values, key=lambda v: v.node.id)
    return dict(sorted(out.items()))


def find(known: dict[str, list[Value]], name: str) -> str | None:
    """The op ``name`` spells (its token, a value's token or string value), or None."""
    token = compact(name)
    if token in known:
        return token
    return next((op for op, values in known.items() if token in spellings(values)), None)
