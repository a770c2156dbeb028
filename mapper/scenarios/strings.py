"""Vocabularies spelt as strings: literal lists the new op (or its new module) must enter.

The map records names, not string literals, so Python sources are read for them. A list,
tuple, set or dict literal (the outermost one; strings inside calls within it count: a table
of ``Row(3, "CONV2D", "CONV2D")``) is a string vocabulary when its strings name:

- at least a third of the known ops (and no fewer than three), the similar op among them — a
  table of every op (a generator's rows, a test's per-op specs) that gains the new op's row;
- or at least two thirds of the known ops, the similar op missing — a table of every op
  that was not given the similar op's row (a test's cases) still gains the new op's;
  a plain list of names inside a function (the ops a test requires, a set a check accepts)
  is a set of its own, which a new op enters only as a list of every op: two thirds, too;
- or at least a third (and three) of the modules of a folder where the new op gets a module
  of its own, the similar op's module among them, as strings or as plain names — a list of
  that folder's families (a test asserting which translator families exist, a backend's tuple
  of kernel modules) that gains the new module's;
- or, for a new op with an input carrying a shape, the ONNX operators
  whose inputs carry shapes (:mod:`.shapeinputs`): a table of the inputs bound as constants.

The tests of a tool beside the stack (:func:`~.footprint.tests_a_tool`) are not read.
In a file where the map records no use of the op's values (a test: the map does not
resolve its names), members of the op vocabularies spelt out in a literal count as strings do
(a test's table of requests, ``OpRequest.make(OpKind.CONV2D, …)``, one per op).

Each becomes a ``use`` point at the similar op's entry, its symbol the enclosing definition
(the assignment or the test holding the literal).
"""

from __future__ import annotations

import ast
import posixpath
import re
from collections.abc import Iterable, Iterator

from mapper.impact.mapview import EvidenceKind, MapView
from mapper.impact.records import Hop
from mapper.model import NodeKind
from mapper.scenarios import footprint, shapeinputs, vocab
from mapper.scenarios.records import ChangePoint, PointKind

_LITERALS = (ast.List, ast.Tuple, ast.Set, ast.Dict)
_NAME = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*\b")
_QUOTED = re.compile(r"""["']([A-Za-z][A-Za-z0-9_]*)["']""")


def _outermost(tree: ast.AST) -> Iterator[ast.expr]:
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, _LITERALS):
            yield node
            continue
        stack.extend(ast.iter_child_nodes(node))


def _strings(node: ast.AST, classes: set[str], bare: bool) -> Iterator[tuple[str, int]]:
    """The strings in ``node``, the member names of ``classes`` it spells out
    (``OpKind.CONV2D`` gives ``CONV2D``), and with ``bare`` the plain names it holds (a
    tuple of imported modules)."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
            yield sub.value, sub.lineno
        elif bare and isinstance(sub, ast.Name):
            yield sub.id, sub.lineno
        elif (
            isinstance(sub, ast.Attribute)
            and isinstance(sub.value, ast.Name)
            and sub.value.id in classes
        ):
            yield sub.attr, sub.lineno


class _Vocabulary:
    """One vocabulary spelt as strings: compact spelling → the items it names."""

    def __init__(
        self, label: str, spellings: dict[str, set[str]], like: set[str], bare: bool = False
    ) -> None:
        self.label = label
        self.bare = bare  # plain names count as its strings do (modules named in a tuple)
        self.spellings = spellings
        self.like = like  # the items standing for the similar op
        items = {i for found in spellings.values() for i in found}
        self.size = len(items)
        self.least = max(3, -(-self.size // 3))
        self.most = max(3, -(-2 * self.size // 3))  # names this many: a table of all of them

    def enters(self, named: set[str], own_set: bool = False) -> bool:
        """Whether a literal naming ``named`` is one the new op enters: it names the similar
        op among a third of the items, or two thirds of the ops without it (or, for a plain
        list of names in a function, ``own_set``, with it)."""
        if len(named) >= self.least and named & self.like and not own_set:
            return True
        return not self.bare and len(named) >= self.most

    def could(self, named: set[str]) -> bool:
        """Whether a file naming ``named`` in all may hold a literal the new op enters."""
        return self.enters(named)

    def named(self, strings: Iterable[str]) -> set[str]:
        out: set[str] = set()
        for s in strings:
            out |= self.spellings.get(vocab.compact(s), set())
        return out


class _ShapeList(_Vocabulary):
    """The ONNX operators whose inputs carry shapes (:mod:`.shapeinputs`), named as strings."""

    def __init__(self) -> None:
        ops = shapeinputs.shape_inputs()
        super().__init__(
            "ONNX operators with shape inputs", {vocab.compact(op): {op} for op in ops}, set()
        )
        self.size = sum(1 for inputs in ops.values() if inputs)  # the ones it lists

    def enters(self, named: set[str], own_set: bool = False) -> bool:
        return shapeinputs.lists_them(named)

    def could(self, named: set[str]) -> bool:
        return sum(1 for op in named if shapeinputs.shape_inputs()[op]) >= shapeinputs.LEAST


def _vocabularies(
    view: MapView, known: dict[str, list[vocab.Value]], token: str, devoted: dict[str, set[str]]
) -> list[_Vocabulary]:
    ops: dict[str, set[str]] = {}
    for op, values in known.items():
        for spelling in vocab.spellings(values):
            ops.setdefault(spelling, set()).add(op)
    out = [_Vocabulary("ops", ops, {token})]
    files = [n.path for n in view.nodes(NodeKind.FILE) if (n.path or "").endswith(".py")]
    for new, mirrored in devoted.items():
        folder = posixpath.dirname(new)
        stems = {
            vocab.compact(posixpath.basename(p)[:-3]): {p}
            for p in files
            if p and posixpath.dirname(p) == folder and not posixpath.basename(p).startswith("_")
        }
        out.append(_Vocabulary(f"modules of {folder}", stems, mirrored, bare=True))
    return out


def string_lists(
    view: MapView,
    known: dict[str, list[vocab.Value]],
    token: str,
    name: str,
    devoted: dict[str, set[str]],
    seen: set[str],
) -> list[ChangePoint]:
    """Points for the string vocabularies the new op enters (see the module docstring);
    ``devoted`` maps each new module predicted for the op to the similar op's modules it
    mirrors. In files the map holds no use of the op's values in (``seen`` lists those it
    does: tests, whose names the map does not resolve), members of the op vocabularies spelt
    out in a literal (``OpKind.CONV2D``) count as its strings do."""
    vocabs = _vocabularies(view, known, token, devoted)
    if shapeinputs.applies(name):
        vocabs.append(_ShapeList())
    classes = {
        vocab.short_name(node)
        for node in (view.node(v.vocabulary) for vs in known.values() for v in vs)
        if node is not None
    }
    members = re.compile(rf"\b(?:{'|'.join(map(re.escape, sorted(classes)))})\.(\w+)")
    out: list[ChangePoint] = []
    for file in view.nodes(NodeKind.FILE):
        path = file.path or ""
        if not path.endswith(".py") or view.config.is_ignored(path):
            continue
        if view.config.is_test(path) and footprint.tests_a_tool(view, file.id):
            continue  # the tests of a tool beside the stack
        text = view.source(path)
        if text is None:
            continue
        spelt_out = set() if path in seen or not classes else classes
        quoted = set(_QUOTED.findall(text)) | (set(members.findall(text)) if spelt_out else set())
        words = set(_NAME.findall(text))
        hopeful = [v for v in vocabs if v.could(v.named(words if v.bare else quoted))]
        if not hopeful:
            continue
        try:
            tree = ast.parse(text)
        except SyntaxError:
            continue
        bodies = [
            (f.lineno, f.end_lineno or f.lineno)
            for f in ast.walk(tree)
            if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
        ]
        for literal in _outermost(tree):
            own_set = _names_only(literal) and any(a <= literal.lineno <= b for a, b in bodies)
            for v in hopeful:
                strings = list(_strings(literal, spelt_out, v.bare))
                named = v.named(s for s, _ in strings)
                if not v.enters(named, own_set and not v.bare):
                    continue
                lines = [n for s, n in strings if v.named([s]) & v.like]
                line = lines[0] if lines else max(n for s, n in strings if v.named([s]))
                held = _holder(tree, literal)
                module = str(file.get("module") or path.removesuffix(".py").replace("/", "."))
                symbol = f"{module}.{held}" if held else ""
                out.append(_point(view, path, line, v, len(named), name, symbol))
    return out


def _names_only(literal: ast.expr) -> bool:
    """A list, tuple or set of string constants only (names, not rows of a table)."""
    elts = getattr(literal, "elts", None)
    return bool(elts) and all(
        isinstance(e, ast.Constant) and isinstance(e.value, str) for e in elts or ()
    )


def _holder(tree: ast.Module, literal: ast.expr) -> str:
    """The dotted name, within its module, of the definition or module-level assignment
    holding ``literal`` ("" for none: a literal in a module-level call or loop)."""
    names: list[str] = []
    body: list[ast.stmt] = tree.body
    while True:
        inside = next((s for s in body if s.lineno <= literal.lineno <= (s.end_lineno or 0)), None)
        if isinstance(inside, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.append(inside.name)
            if isinstance(inside, ast.ClassDef):
                body = inside.body
                continue
            return ".".join(names)
        if isinstance(inside, (ast.Assign, ast.AnnAssign)):
            targets = inside.targets if isinstance(inside, ast.Assign) else [inside.target]
            if len(targets) == 1 and isinstance(targets[0], ast.Name):
                return ".".join([*names, targets[0].id])
        return ".".join(names)


def _point(
    view: MapView, path: str, line: int, v: _Vocabulary, count: int, name: str, symbol: str
) -> ChangePoint:
    detail = f"its strings name {count} of the {v.size} {v.label}"
    hop = Hop(
        f"file:{path}",
        f"file:{path}",
        "names",
        EvidenceKind.CODE_REFERENCE,
        path,
        line,
        0.8,
        True,
        detail,
    )
    return ChangePoint(
        PointKind.USE,
        view.config.layer_of(path),
        path,
        line,
        f"file:{path}",
        symbol,
        f"add {name} to the strings at {path}:{line} ({detail})",
        (hop,),
    )
