"""Op vocabularies found on the map, and the footprint of one op across the layers.

A vocabulary is a set of values naming the same kind of thing: the members of a Python enum
(or any class of constants), a proto enum's values, a family of C macros / enumerators sharing
a prefix (``REFSTACK_KERNEL_*``). An *op* is a value name (less its vocabulary's common
prefix) found in at least two vocabularies — the same op spelt by several layers. Its
*footprint* is every node on the map spelt after it: vocabulary values, functions, classes and
methods, tests, and what the map links to them (registrations, uses, doc mentions).
"""

from __future__ import annotations

import functools
import importlib.util
import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from mapper.impact.mapview import MapView, Node
from mapper.model import EdgeKind, NodeKind

_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z]|\d|\b|_)|[A-Z]?[a-z]+|[A-Z]+|\d+")
_VALUE_KINDS = ("constant", "enumerator", "macro")
_CODE_KINDS = ("function", "method", "class", "kernel", "struct", "operator")


def words(name: str) -> list[str]:
    """``_import_layer_norm`` → [import, layer, norm]; ``LayerNormalization`` → [layer,
    normalization]; ``REFSTACK_KERNEL_RELU`` → [refstack, kernel, relu]."""
    return [w.lower() for w in _WORD.findall(name)]


def op_words(name: str) -> list[str]:
    """The words of a new op's name as its user wrote them: split at underscores where it has
    them, numbers kept in the part that holds them (``dsv4_hc_comb`` → dsv4, hc, comb, where
    :func:`words` would give dsv, 4, hc, comb and :func:`glued` dsv4hc, comb); else
    :func:`words` (``Col2Im`` → col, 2, im)."""
    parts = [p for p in name.split("_") if p]
    if len(parts) < 2:
        return words(name)
    return ["".join(words(p)) for p in parts]


def runs(name: str, longest: int = 6) -> set[str]:
    """Every run of up to ``longest`` consecutive words of ``name``, concatenated."""
    ws = words(name)
    return {
        "".join(ws[i:j])
        for i in range(len(ws))
        for j in range(i + 1, min(len(ws), i + longest) + 1)
    }


def compact(name: str) -> str:
    return "".join(words(name))


def short_name(node: Node) -> str:
    name = node.name
    for sep in (":", "."):
        name = name.rpartition(sep)[2]
    return name


@dataclass(frozen=True, slots=True)
class Value:
    node: Node
    vocabulary: str  # the enum's node id, or ``path:PREFIX_`` for a C macro family
    token: str  # the op it names, compact (``layernorm``)
    spelled: str  # the part of the name that spells the op (``LAYERNORM``)


def _prefix(names: list[str]) -> str:
    """The common ``_``-bounded prefix of several value names (``OP_``, ``REFSTACK_KERNEL_``)."""
    if len(names) < 2:
        return ""
    first, common = names[0], 0
    parts = first.split("_")
    for k in range(1, len(parts)):
        head = "_".join(parts[:k]) + "_"
        if all(n.startswith(head) for n in names):
            common = len(head)
    return first[:common]


def vocabularies(view: MapView, least: int = 4) -> dict[str, list[Value]]:
    """Vocabulary id → its values, for vocabularies of at least ``least`` values."""
    groups: dict[str, list[Node]] = defaultdict(list)
    for node in view.nodes(NodeKind.SYMBOL):
        if node.get("symbol_kind") not in _VALUE_KINDS or node.get("value") is None:
            continue  # a field without a value (a dataclass's) is no vocabulary value
        if (node.path or "").endswith(".pyi"):
            continue  # a stub repeats what its module or proto defines
        parents = view.neighbours(node.id, {EdgeKind.CONTAINS}, "in")
        owner = next((e.source for e in parents if e.source.startswith("symbol:")), None)
        if owner is None:
            name = short_name(node)
            family = "_".join(name.split("_")[:2]) + "_" if name.count("_") >= 2 else ""
            if not family:
                continue
            owner = f"{node.path}:{family}"
        groups[owner].append(node)
    out: dict[str, list[Value]] = {}
    for vocab, nodes in groups.items():
        if len(nodes) < least:
            continue
        names = [short_name(n) for n in nodes]
        cut = len(_prefix(names))
        out[vocab] = [
            Value(n, vocab, compact(name[cut:]), name[cut:])
            for n, name in zip(nodes, names, strict=True)
            if name[cut:]
        ]
    return out


def ops(view: MapView) -> dict[str, list[Value]]:
    """Op token → its values, for tokens named by at least two vocabularies."""
    by_token: dict[str, list[Value]] = defaultdict(list)
    for values in vocabularies(view).values():
        for value in values:
            by_token[value.token].append(value)
    return {t: vs for t, vs in sorted(by_token.items()) if len({v.vocabulary for v in vs}) >= 2}


def spellings(values: Iterable[Value]) -> set[str]:
    """The compact spellings of an op: its token and its values' string values
    (``OpType.LAYERNORM = "LayerNormalization"`` adds ``layernormalization``)."""
    out: set[str] = set()
    for v in values:
        out.add(v.token)
        raw = v.node.get("value")
        if isinstance(raw, str) and raw[:1] in "\"'" and raw.strip("\"'"):
            out.add(compact(raw.strip("\"'")))
    return out


def named_after(view: MapView, spelt: set[str]) -> list[Node]:
    """Definitions and tests whose name spells the op (a run of its words equals a spelling)."""
    found = []
    for node in view.nodes():
        code = node.kind is NodeKind.SYMBOL and node.get("symbol_kind") in _CODE_KINDS
        if (code or node.kind is NodeKind.TEST) and runs(short_name(node)) & spelt:
            found.append(node)
    return found


def new_forms(spelt: set[str], new: str) -> dict[str, str]:
    """Each spelling of the similar op → the new op's spelling in the same form: where the op
    has a short and a long spelling (``layernorm``, ``layernormalization``) and the new name
    ends like the long one, the short form drops that ending (``instancenormalization`` →
    ``instancenorm``)."""
    out = {}
    for short in spelt:
        form = new
        for long in spelt:
            suffix = long[len(short) :]
            if long != short and long.startswith(short) and new.endswith(suffix):
                form = new[: -len(suffix)] or new
        out[short] = form
    return out


def rename(name: str, forms: dict[str, str], new_words: Sequence[str] = ()) -> str:
    """``name`` with the similar op's spelling in its last component replaced by the new
    op's, case kept (``_import_relu`` → ``_import_gelu``, ``RELU`` → ``GELU``). With the new
    op's words (``ScatterND`` → scatter, nd), a spelling whose words are separated keeps the
    separation (``GATHER_ND`` → ``SCATTER_ND``, ``_gather_nd`` → ``_scatter_nd``) and a
    CamelCase one its capitals (``GatherND`` → ``ScatterND``)."""
    head, dot, last = name.rpartition(".")
    ws = _WORD.findall(last)
    for i in range(len(ws)):
        for j in range(min(len(ws), i + 4), i, -1):
            new = forms.get("".join(w.lower() for w in ws[i:j]))
            if new is None:
                continue
            start = last.find(ws[i])
            end = last.find(ws[j - 1], start) + len(ws[j - 1])
            seg = last[start:end]
            sep = "_" if "_" in seg else ""
            parts = _split(new, new_words) if sep or seg[:1].isupper() else [new]
            if seg.isupper():
                rep = sep.join(p.upper() for p in parts)
            elif seg[:1].isupper():  # CamelCase: each word capitalised, an acronym kept
                like = ws[i:j] if len(parts) == j - i else [""] * len(parts)
                rep = sep.join(
                    p.upper() if len(w) > 1 and w.isupper() else p[:1].upper() + p[1:]
                    for p, w in zip(parts, like, strict=True)
                )
            else:
                rep = sep.join(p.lower() for p in parts)
            return head + dot + last[:start] + rep + last[end:]
    return name


def _split(form: str, new_words: Sequence[str]) -> list[str]:
    """``form`` (a compact spelling of the new op) cut at the new op's word boundaries: each
    word in turn, or the rest of ``form`` where a word is only its start (``instancenorm``
    with instance, normalization → instance, norm)."""
    parts: list[str] = []
    rest = form
    for word in new_words:
        if not rest:
            break
        if rest.startswith(word):
            parts.append(word)
            rest = rest[len(word) :]
        elif word.startswith(rest):
            parts.append(rest)
            rest = ""
        else:
            return [form]
    return glued([*parts, rest] if rest else parts)


def glued(ws: Sequence[str]) -> list[str]:
    """``ws`` with each number joined to the words around it and a lone letter to the word
    after it, as names spell them (col, 2, im → col2im; conv, 2, d → conv2d; q, linear,
    matmul → qlinear, matmul: ``qlinear_matmul``, as the stack and ONNX's reference write
    ``QLinearMatMul``)."""
    out: list[str] = []
    digit = lone = False
    for w in ws:
        if out and (digit or lone or w.isdigit()):
            out[-1] += w
            lone = False
        else:
            out.append(w)
            lone = len(w) == 1 and w.isalpha()
        digit = w.isdigit()
    return out


def snake(name: str) -> str:
    """The words of ``name`` in snake case, numbers glued (``ConvTranspose`` →
    ``conv_transpose``, ``Col2Im`` → ``col2im``); ``name`` lowered when it has none."""
    return "_".join(glued(op_words(name))) or name.lower()


def module_stem(name: str) -> str:
    """The new op ``name`` as the stem of a module or test file where nothing on the map says
    how to spell it: as ONNX's reference implementation names the op's module where it has
    one (``BitCast`` → ``bitcast``, ``TopK`` → ``topk``, ``QLinearMatMul`` →
    ``qlinear_matmul``), else :func:`snake`.

    Of the reference stack's ops whose ONNX reference module joins words that :func:`words`
    separates, five are spelt there as ONNX spells them (``BITCAST``, ``MATMUL``,
    ``MATMUL_INTEGER``, ``QLINEARMATMUL``, ``TOPK``) and two with the words apart
    (``GATHER_ND``, ``SCATTER_ND``, whose similar op ``GATHER_ND`` was spelt apart before them:
    such evidence, where there is some, decides instead: :mod:`.namestyle`)."""
    return _reference_names().get(compact(name)) or snake(name)


@functools.cache
def _reference_names() -> dict[str, str]:
    """Compact op name → the name of its module in ONNX's reference implementation
    (``onnx/reference/ops/op_bitcast.py`` → ``bitcast``), read from the installed package's
    file names (nothing is imported); empty without the ``onnx`` package."""
    try:
        spec = importlib.util.find_spec("onnx")
    except (ImportError, ValueError):
        return {}
    if spec is None or not spec.submodule_search_locations:
        return {}
    ops = Path(next(iter(spec.submodule_search_locations))) / "reference" / "ops"
    names = sorted(p.stem.removeprefix("op_") for p in ops.glob("op_*.py"))
    return {n.replace("_", ""): n for n in names}


def short_name_of(node_id: str) -> str:
    """The last name component of a node id (``symbol:a.b.C.D`` → ``D``)."""
    return node_id.rpartition(":")[2].rpartition(".")[2]
