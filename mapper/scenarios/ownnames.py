"""The definitions a new op's own module gets: the names its folder's per-op modules share.

In a code folder where ops each have a module of their own (:mod:`.ownmodules`), the
top-level definitions of those modules follow name templates once the op's name, as each
module's file name spells it, is abstracted, in lower case (``_det`` in ``compiler/det.py``:
``_{}``), in capitals (``DET_TYPES``: ``{UPPER}_TYPES``) or as capitalised words
(``DetTranslator`` in ``translators/det.py`` and ``ConvIntegerTranslator`` in
``translators/conv_integer.py``: ``{Camel}Translator``). A template found in at least half of
the folder's per-op modules (two at least) is one a new op's module follows, as
:mod:`.testnames` does for test modules: its module gets that definition, the op spelt as the
new module's name spells it, or as the op's own name is written for ``{Camel}``.
"""

from __future__ import annotations

import posixpath
from collections import Counter

from mapper.impact.mapview import MapView, Node
from mapper.ingest.code import python_module
from mapper.model import EdgeKind
from mapper.scenarios import testnames, vocab
from mapper.scenarios.records import ChangePoint, PointKind

_FORMS = ("{}", "{UPPER}", "{Camel}")


def _forms(spelt: str, camel: str | None = None) -> dict[str, str]:
    """Each placeholder → the op as ``spelt`` (a module name: ``conv_integer``) writes it."""
    if camel is None:
        camel = "".join(w[:1].upper() + w[1:] for w in spelt.split("_"))
    return {"{}": spelt, "{UPPER}": spelt.upper(), "{Camel}": camel}


def _template(name: str, forms: dict[str, str]) -> str | None:
    """``name`` with the op abstracted (the longest spelling it holds), None without one."""
    held = [(len(text), form) for form, text in forms.items() if text and text in name]
    if not held:
        return None
    form = max(held)[1]
    return name.replace(forms[form], form, 1)


def templates(view: MapView, pattern: str, modules: dict[str, Node]) -> dict[str, list[Node]]:
    """Template → one definition following it per module, for the templates recurring in at
    least half of ``modules`` (op → its module of ``pattern``), two at least."""
    found: dict[str, dict[str, Node]] = {}
    for module in modules.values():
        if not module.path:
            continue
        forms = _forms(testnames.spelt_in(pattern, posixpath.basename(module.path)))
        prefix = f"{module.attrs.get('module') or ''}."
        for edge in view.neighbours(module.id, {EdgeKind.DEFINES}, "out"):
            node = view.node(edge.target)
            if node is None or not node.name.startswith(prefix):
                continue
            short = node.name[len(prefix) :]
            if "." in short or (template := _template(short, forms)) is None:
                continue  # a member, or a name not spelling the op
            found.setdefault(template, {}).setdefault(module.path, node)
    counts = Counter({t: len(defs) for t, defs in found.items()})
    least = max(testnames.LEAST, -(-len(modules) // 2))
    return {
        t: [found[t][p] for p in sorted(found[t])] for t, n in sorted(counts.items()) if n >= least
    }


def new_definitions(
    view: MapView,
    pattern: str,
    target: str,
    modules: dict[str, Node],
    name: str,
    have: set[str],
) -> list[ChangePoint]:
    """The definitions of the new module ``target`` by its folder's templates, except those
    already predicted (``have``: qualified names; ``lp_pool`` is ``lppool`` spelt another
    way)."""
    spelt = testnames.spelt_in(pattern, posixpath.basename(target))
    camel = name if name[:1].isupper() else None
    forms = _forms(spelt, camel)
    module = python_module(target, view.config.python_roots)
    had = {_compact(h) for h in have}
    out = []
    for template, defs in templates(view, pattern, modules).items():
        predicted = f"{module}.{_fill(template, forms)}"
        if _compact(predicted) in had:
            continue
        detail = f"{len(defs)} of the {len(modules)} modules {pattern} define {template}"
        layer = view.config.layer_of(target)
        point = testnames.written(PointKind.IMPLEMENTATION, target, defs[0], predicted, layer)
        out.append(point(f"for {name}: {detail}", detail))
    return out


def _compact(qualname: str) -> tuple[str, str]:
    owner, _, last = qualname.rpartition(".")
    return owner, vocab.compact(last)


def _fill(template: str, forms: dict[str, str]) -> str:
    for form in _FORMS[::-1]:  # the longer placeholders first: "{}" is inside none of them
        template = template.replace(form, forms[form])
    return template
