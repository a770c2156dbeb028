"""Where a new op goes by the stack's conventions, beyond the similar op's own footprint.

- **A test module of its own.** In a test folder where at least :data:`CONVENTION` ops each
  have a module named after them under one pattern (``test_conformance_<op>.py``,
  ``test_<op>.py``), the new op gets one too, named the same way, even where the similar op
  has none (its tests sit in a module about its family). Where the similar op has its own
  module under that pattern, the tests modelled on its tests go into the new op's module, not
  into the similar op's.
- **Contract entries for attributes**, read from the ONNX schemas (the ``onnx`` package,
  offline; no such point without it, or for an op that is no ONNX operator):

  - a contract interface naming the similar op and one of its attributes that the new op has
    too (same name, same type) describes a value set or an attribute list the new op shares:
    it names the new op as well;
  - where the new op has attributes the similar op lacks, an interface listing attributes per
    op (at least :data:`PER_OP` ops each followed by one of its own: ``SOFTMAX axis;
    TRANSPOSE perm``) gains the new op's entry;
  - where one of those is a string attribute (a mode, a reduction: a set of values the layers
    encode), each contract holding an interface that describes an existing op's string
    attribute (``The PAD kernel's mode``) gains an interface for the new op's.
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
from collections.abc import Iterable
from itertools import pairwise

from mapper.impact.mapview import EvidenceKind, MapView, Node
from mapper.impact.records import Hop
from mapper.ingest.code import python_module
from mapper.model import NodeKind
from mapper.scenarios import namestyle, similar, testnames, vocab
from mapper.scenarios.records import ChangePoint, PointKind

CONVENTION = 2  # ops with a module of their own under one pattern: a folder's convention
PER_OP = 3  # ops followed by their own attributes: a text listing attributes per op
_TOKEN = re.compile(r"[A-Za-z][A-Za-z0-9_]*")


def _hop(node: Node, like: str, detail: str, evidence: EvidenceKind) -> Hop:
    return Hop(node.id, like, "convention", evidence, node.path, node.line, 0.7, True, detail)


def _conventions(
    view: MapView, known: dict[str, list[vocab.Value]]
) -> dict[tuple[str, str], dict[str, Node]]:
    """(test folder, module name pattern) → op → its module, for every pattern naming an op."""
    spelling: dict[str, str] = {}
    for op, values in known.items():
        for s in vocab.spellings(values):
            spelling.setdefault(s, op)
    found: dict[tuple[str, str], dict[str, Node]] = {}
    for file in view.nodes(NodeKind.FILE):
        path = file.path or ""
        if not path.endswith(".py") or not view.config.is_test(path):
            continue
        folder, base = posixpath.split(path)
        parts = base[:-3].split("_")
        for i in range(1, len(parts)):
            for j in range(i + 1, len(parts) + 1):
                spelt = spelling.get(vocab.compact("_".join(parts[i:j])))
                if spelt is not None:
                    pattern = "_".join([*parts[:i], "{}", *parts[j:]]) + ".py"
                    found.setdefault((folder, pattern), {}).setdefault(spelt, file)
    return found


def _new_modules(
    view: MapView, known: dict[str, list[vocab.Value]], name: str, token: str | None
) -> list[tuple[str, str, str, dict[str, Node]]]:
    """(folder, pattern, new module, op → module) of each convention the new op gets a module by,
    spelt as the similar op ``token`` is there (:mod:`.namestyle`)."""
    out = []
    spelt_as, form = None, ""
    if token is not None:
        spelt = vocab.spellings(known[token])
        spelt_as = namestyle.Spelling(view, known[token], spelt)
        form = vocab.new_forms(spelt, vocab.compact(name)).get(token, vocab.compact(name))
    for (folder, pattern), modules in sorted(_conventions(view, known).items()):
        if len(modules) < CONVENTION:
            continue
        joined = None
        if spelt_as is not None and token is not None:
            own = modules.get(token)
            joined = (
                spelt_as.joined_in(posixpath.basename(own.path or "")[:-3])
                if own is not None
                else spelt_as.joined_by(namestyle.covered_layer(view, folder))
            )
        target = posixpath.join(folder, pattern.format(namestyle.stem(name, joined, form)))
        if view.node(f"file:{target}") is None:
            out.append((folder, pattern, target, modules))
    return out


def test_modules(
    view: MapView, known: dict[str, list[vocab.Value]], name: str, token: str | None = None
) -> list[ChangePoint]:
    """A new test module per folder whose modules follow the one-module-per-op convention,
    spelling the new op as the place spells the similar op ``token`` (snake case without
    one), with the tests its sibling modules' name templates give it (:mod:`.testnames`)."""
    out = []
    for folder, pattern, target, modules in _new_modules(view, known, name, token):
        model = modules[min(modules)]
        detail = (
            f"{len(modules)} ops have a module {pattern} in {folder}: {', '.join(sorted(modules))}"
        )
        out.append(
            ChangePoint(
                PointKind.TEST,
                None,
                target,
                1,
                model.id,
                "",
                f"write {target} for {name}, as {detail}",
                (_hop(model, model.id, detail, EvidenceKind.DEFINITION),),
            )
        )
        out.extend(testnames.new_tests(view, pattern, target, modules, name))
    return out


def into_own_modules(
    view: MapView,
    known: dict[str, list[vocab.Value]],
    token: str,
    name: str,
    points: list[ChangePoint],
) -> list[ChangePoint]:
    """``points`` with each test modelled on one in the similar op's own module (the module a
    folder's convention names after it) moved to the new op's module of that convention: the
    new op's tests go where the convention puts them, not into the similar op's module.
    Where the similar op has no module of its own there but the folder's modules share test
    name templates (:mod:`.testnames`), a test modelled on the similar op's in another module
    of the folder (one about its family) is dropped: the new module's tests are those the
    templates name."""
    moved: dict[str, str] = {}
    templated: set[str] = set()
    for folder, pattern, new, modules in _new_modules(view, known, name, token):
        if token in modules and modules[token].path:
            moved[str(modules[token].path)] = new
        elif testnames.templates(view, pattern, modules):
            templated.add(folder)
    roots = view.config.python_roots
    out = []
    for point in points:
        test = point.kind is PointKind.TEST
        existing = view.node(f"file:{point.path}") is not None
        if test and existing and posixpath.dirname(point.path or "") in templated:
            continue
        target = moved.get(point.path or "") if test else None
        if target is None or not point.predicted or point.path is None:
            out.append(point)
            continue
        old, new = python_module(point.path, roots), python_module(target, roots)
        predicted = point.predicted
        if predicted.startswith(old + "."):
            predicted = new + predicted[len(old) :]
        action = f"{point.action}, in {target} (the module the convention gives {name})"
        out.append(
            dataclasses.replace(point, path=target, line=None, predicted=predicted, action=action)
        )
    return out


def _attributes(known: dict[str, list[vocab.Value]]) -> dict[str, dict[str, str]]:
    """Op → its ONNX attributes, for the ops that are ONNX operators (an operator without
    attributes, ``GlobalAveragePool``, has none: every attribute of a new op is fresh to it)."""
    out = {}
    for op, values in known.items():
        attrs = similar.attributes(vocab.spellings(values) | {op})
        if attrs is not None:
            out[op] = attrs
    return out


def _mentions(text: str, spelling: dict[str, set[str]]) -> list[tuple[str, set[str]]]:
    """Each word of ``text`` with the ops it spells."""
    return [(w, spelling.get(vocab.compact(w), set())) for w in _TOKEN.findall(text)]


def attribute_contracts(
    view: MapView, known: dict[str, list[vocab.Value]], token: str, name: str
) -> list[ChangePoint]:
    """Contract points for the new op's attributes (see the module docstring)."""
    new = similar.attributes({vocab.compact(name)})
    attrs = _attributes(known)
    like = attrs.get(token)
    if new is None or like is None:
        return []
    spelling: dict[str, set[str]] = {}
    for op, values in known.items():
        for s in vocab.spellings(values):
            spelling.setdefault(s, set()).add(op)
    shared = {a for a, t in new.items() if like.get(a) == t}
    fresh = set(new) - set(like)
    strings = {a for a in fresh if new[a] == "STRING"}
    anchor = known[token][0].node.id
    out: dict[str, ChangePoint] = {}  # one point per interface, the first reason given
    value_sets: dict[str, Node] = {}  # contract file → its last interface describing one
    for node in _interfaces(view):
        words = _mentions(str(node.get("text") or node.get("description") or ""), spelling)
        named = {op for _, ops in words for op in ops}
        lowered = {w.lower() for w, _ in words}
        if token in named and lowered & shared:
            why = (
                f"names {token} and its {', '.join(sorted(lowered & shared))}, which {name} shares"
            )
            out.setdefault(node.id, _contract(node, anchor, name, why))
        listed = {
            op for (_, ops), (nxt, _) in pairwise(words) for op in ops if nxt in attrs.get(op, {})
        }
        if fresh and len(listed) >= PER_OP:
            why = (
                f"lists the attributes of {len(listed)} ops; {name} adds {', '.join(sorted(fresh))}"
            )
            out.setdefault(node.id, _contract(node, anchor, name, why))
        if any(attrs.get(op, {}).get(w) == "STRING" for op in named for w in lowered):
            value_sets[node.path or ""] = node
    for path, node in sorted(value_sets.items()):
        if strings and path:
            why = (
                f"{node.id} describes an op's string attribute; {name} adds "
                f"{', '.join(sorted(strings))}"
            )
            out[f"new:{path}"] = _contract(node, node.id, name, why, new_entry=True)
    return list(out.values())


def _interfaces(view: MapView) -> Iterable[Node]:
    return (n for n in view.nodes(NodeKind.INTERFACE) if n.path)


def _contract(node: Node, like: str, name: str, why: str, new_entry: bool = False) -> ChangePoint:
    action = (
        f"add an interface for {name}'s values beside {node.id} ({why})"
        if new_entry
        else f"name {name} in {node.id}: it {why}"
    )
    return ChangePoint(
        PointKind.CONTRACT,
        None,
        node.path,
        node.line,
        like,
        "" if new_entry else node.id,
        action,
        (_hop(node, like, why, EvidenceKind.CONTRACT),),
    )
