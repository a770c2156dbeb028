"""The tests a new op's own test module gets: the names its folder's per-op modules share.

In a folder where ops each have a module of their own (:mod:`.conventions`), the tests of
those modules follow name templates once the op's name, as each module's file name spells
it, is abstracted: ``test_scatter_nd_matches_onnxruntime`` in ``test_scatter_nd.py`` and
``test_conv_transpose_matches_onnxruntime`` in ``test_conv_transpose.py`` are
``test_{}_matches_onnxruntime``. A template naming the op and found in at least half of the
folder's per-op modules (two at least) is one a new op's module follows: its new module gets
that test, the op spelt as the new module's name spells it. A test name not naming the op
(``test_an_index_out_of_range_is_a_fault``), or naming an ONNX attribute of those modules' ops
that the new op lacks (``test_older_opsets_import_{}_without_a_reduction``), describes
behaviour the new op need not share.
"""

from __future__ import annotations

import posixpath
from collections import Counter
from collections.abc import Callable

from mapper.impact.mapview import EvidenceKind, MapView, Node
from mapper.impact.records import Hop
from mapper.ingest.code import python_module
from mapper.model import NodeKind
from mapper.scenarios import similar, vocab
from mapper.scenarios.records import ChangePoint, PointKind

LEAST = 2  # per-op modules a template must recur in, besides at least half of them


def spelt_in(pattern: str, base: str) -> str:
    """The part of the file name ``base`` that stands for ``{}`` in ``pattern``."""
    prefix, _, suffix = pattern.partition("{}")
    return base[len(prefix) : len(base) - len(suffix)]


def templates(view: MapView, pattern: str, modules: dict[str, Node]) -> dict[str, list[Node]]:
    """Template (``test_{}_matches_the_loop``) → one test following it per module, for the
    templates recurring in at least half of ``modules`` (op → its module of ``pattern``)."""
    by_path = {
        m.path: spelt_in(pattern, posixpath.basename(m.path)) for m in modules.values() if m.path
    }
    found: dict[str, dict[str, Node]] = {}
    for test in view.nodes(NodeKind.TEST):
        spelt = by_path.get(test.path or "")
        name = vocab.short_name(test)
        if not spelt or f"_{spelt}_" not in f"_{name}_":
            continue
        template = f"_{name}_".replace(f"_{spelt}_", "_{}_", 1)[1:-1]
        found.setdefault(template, {}).setdefault(test.path or "", test)
    counts = Counter({t: len(tests) for t, tests in found.items()})
    least = max(LEAST, -(-len(by_path) // 2))
    return {
        t: [found[t][p] for p in sorted(found[t])] for t, n in sorted(counts.items()) if n >= least
    }


def new_tests(
    view: MapView, pattern: str, target: str, modules: dict[str, Node], name: str
) -> list[ChangePoint]:
    """The tests of the new module ``target`` by its folder's templates."""
    spelt = spelt_in(pattern, posixpath.basename(target))
    module = python_module(target, view.config.python_roots)
    lacked = _lacked_attributes(modules, name)
    out = []
    for template, tests in templates(view, pattern, modules).items():
        if lacked & set(template.split("_")):
            continue  # about an attribute of the modules' ops the new op has not
        detail = f"{len(tests)} of the {len(modules)} modules {pattern} have a test {template}"
        point = written(PointKind.TEST, target, tests[0], f"{module}.{template.format(spelt)}")
        out.append(point(f"for {name}: {detail}", detail))
    return out


def written(
    kind: PointKind, target: str, model: Node, predicted: str, layer: str | None = None
) -> Callable[[str, str], ChangePoint]:
    """A point writing ``predicted`` in ``target`` after a folder's convention, which
    ``model`` follows: given the action's end and the convention's detail."""

    def point(why: str, detail: str) -> ChangePoint:
        line = 1 if kind is PointKind.IMPLEMENTATION else None
        hop = Hop(model.id, model.id, "convention", EvidenceKind.DEFINITION, model.path,
                  model.line, 0.7, True, detail)  # fmt: skip
        short = predicted.rpartition(".")[2]
        action = f"write {short} in {target} {why}"
        return ChangePoint(kind, layer, target, line, model.id, predicted, action, (hop,))

    return point


def _lacked_attributes(modules: dict[str, Node], name: str) -> set[str]:
    """The ONNX attribute names of the modules' ops that the new op ``name`` has not (none
    known where ``name`` is no ONNX operator)."""
    own = similar.attributes({vocab.compact(name)})
    if own is None:
        return set()
    theirs: set[str] = set()
    for op in modules:
        theirs |= set(similar.attributes({op}) or {})
    return {a.lower() for a in theirs - set(own)}
