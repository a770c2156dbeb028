"""``stackmap init``: propose a ``stackmap.toml`` for another repository.

Layers are guessed from folder names (up to three levels deep) matched against the usual names
of an accelerator stack's layers (:mod:`mapper.ingest.layer_names`), ordered top to bottom;
when fewer than three are recognised, or the code disagrees with them (a file of one uses a
file of a layer above), they are proposed from the repository's own dependencies
(:mod:`mapper.ingest.structure`), each boundary with its evidence as comments. A layer's
description is the first paragraph of the folder's README when there is one, else a stock
sentence. Doc folders, contracts, tests and generated code (``autogen/``, ``generated/``) are
found by name. The proposal is a starting point for the user to edit.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from mapper.ingest.code import language_for
from mapper.ingest.layer_names import GUESSES, Guess
from mapper.ingest.structure import Structure, propose_structure

_SKIP = {
    ".git",
    ".venv",
    "venv",
    "node_modules",
    "build",
    "dist",
    "__pycache__",
    "third_party",
    "external",
    ".stackmap",
    "site-packages",
}
_GENERATED_DIRS = ("autogen", "generated", "_generated", "gen")
_DOC_DIRS = ("docs", "doc", "knowledge_base", "wiki", "documentation")
_ENOUGH_BY_NAME = 3  # layers by folder name need this many, and to agree with the code
_NOT_CODE = {*_DOC_DIRS, "tests", "test", "examples", "benchmarks", "scripts", "contracts"}


def _folders(root: Path, depth: int = 3) -> list[str]:
    found: list[str] = []
    for dirpath, dirnames, _files in os.walk(root):
        rel = Path(dirpath).relative_to(root)
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP and not d.startswith("."))
        if len(rel.parts) >= depth:
            dirnames[:] = []
        found.extend((rel / d).as_posix() for d in dirnames)
    return found


def _first_paragraph(path: Path) -> str | None:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    if text.startswith("---"):  # front matter
        end = text.find("\n---", 3)
        text = text[end + 4 :] if end != -1 else text
    for block in text.split("\n\n"):
        clean = " ".join(line for line in block.splitlines() if not line.startswith("#"))
        if clean.strip():
            return clean.strip()[:300]
    return None


def _readme_paragraph(folder: Path) -> str | None:
    for name in ("README.md", "readme.md", "README"):
        if (folder / name).is_file():
            return _first_paragraph(folder / name)
    return None


def _doc_paragraph(root: Path, docs: list[str], layer: str) -> str | None:
    """The first paragraph of a doc page named after the layer (``<docs>/layers/<id>.md``)."""
    for doc in docs:
        for rel in (f"layers/{layer}.md", f"{layer}.md", f"{layer}/README.md"):
            if (root / doc / rel).is_file():
                return _first_paragraph(root / doc / rel)
    return None


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _layer_id(units: tuple[str, ...], taken: set[str]) -> tuple[str, str]:
    """An id and a title for a proposed layer: a usual layer name when its folder has one
    (the vocabulary is a hint), else the folder's path; siblings share their parent's."""
    names = [u.rstrip("/").rpartition("/")[2] or "root" for u in units]
    guess = next((g for g in GUESSES for n in names if n.lower() in g.names), None)
    if guess is not None and len(units) == 1:
        base, title = guess.id, guess.title
    elif len(units) == 1:
        base = re.sub(r"[^a-z0-9_]+", "_", units[0].lower()).strip("_") or "root"
        title = units[0]
    else:
        parent = os.path.commonpath(units) if all(u != "." for u in units) else ""
        stem = parent.rpartition("/")[2] or "layer"
        base, title = re.sub(r"[^a-z0-9_]+", "_", stem.lower()), f"{stem} ({len(units)} siblings)"
    ident, n = base, 2
    while ident in taken:
        ident, n = f"{base}_{n}", n + 1
    taken.add(ident)
    return ident, title


def _names_fit(layers: list[tuple[Guess, list[str]]], structure: Structure) -> bool:
    """Whether layers found by folder name agree with the code: no file of a layer uses a file
    of a layer above it."""
    prefixes = [(i, p + "/") for i, (_, paths) in enumerate(layers) for p in paths]

    def index(path: str) -> int | None:
        return next((i for i, prefix in prefixes if path.startswith(prefix)), None)

    for user, used in structure.file_edges:
        upper, lower = index(user), index(used)
        if upper is not None and lower is not None and upper > lower:
            return False
    return True


def _glob(unit: str, units: set[str] | frozenset[str] = frozenset()) -> str:
    """A unit's path glob: its folder, or only a folder's own files (``a/*``) — also when
    another unit is a subfolder of it."""
    if unit in (".", "*"):
        return "*"
    if unit.endswith("/*") or language_for(unit) is not None:
        return unit  # a folder's own files, or one file
    nested = any(other.startswith(unit + "/") for other in units)
    return unit + "/*" if nested else unit + "/**"


def _structural_layers(structure: Structure) -> list[str]:
    """``[[layers]]`` entries from the dependency structure, each boundary's evidence as
    comments above the layer it leads to."""
    out = [
        "# Layers from the import/include/call graph (cycles broken at their lightest use,",
        "# ranked by longest path down).",
    ]
    for cycle in structure.cycles:
        out.append(f"# these depend on each other: {', '.join(cycle)}")
    for b in structure.against:
        kinds = ", ".join(b.kinds)
        out.append(
            f"# set aside as against the grain: {b.upper} uses {b.lower}: {b.edges} edge(s) "
            f"({kinds}), e.g. {b.example}"
        )
    taken: set[str] = set()
    units = {u for layer in structure.layers for u in layer.units}
    for layer in structure.layers:
        ident, title = _layer_id(layer.units, taken)
        into = [b for b in structure.boundaries if b.lower in layer.units]
        for b in into:
            kinds = ", ".join(b.kinds)
            out.append(f"# {b.upper} uses {b.lower}: {b.edges} edge(s) ({kinds}), e.g. {b.example}")
        users = sorted({b.upper for b in into})
        used = f"; used by {', '.join(users)}" if users else "; nothing in the repository uses it"
        description = f"{layer.files} code file(s) in {', '.join(layer.units)}{used}."
        out += [
            "[[layers]]",
            f"id = {_quote(ident)}",
            f"name = {_quote(title)}",
            "paths = [" + ", ".join(_quote(_glob(u, units)) for u in layer.units) + "]",
            f"description = {_quote(description)}",
            "",
        ]
    return out


def propose(root: Path) -> str:
    """The proposed config as TOML text."""
    root = root.resolve()
    folders = _folders(root)
    docs = [f for f in folders if Path(f).name.lower() in _DOC_DIRS and "/" not in f] or ["docs"]
    code = [f for f in folders if f.split("/")[0].lower() not in _NOT_CODE]
    found = [(g, f) for g in GUESSES for f in code if Path(f).name.lower() in g.names]
    folders_found = {f for _, f in found}
    nested = {f for f in folders_found if any(f.startswith(o + "/") for o in folders_found)}
    layers: list[tuple[Guess, list[str]]] = []
    for guess in GUESSES:
        paths = [f for g, f in found if g is guess and f not in nested]
        if paths:
            layers.append((guess, paths))
    contracts = next((f for f in folders if Path(f).name == "contracts"), "contracts")
    out = [
        f"# Proposed by `stackmap init` for {root.name}: check the layers and their order.",
        "[stackmap]",
        f"name = {_quote(root.name)}",
        f"contracts = {_quote(contracts)}",
        "docs = [" + ", ".join(_quote(d) for d in docs) + "]",
        'tests = ["tests/**", "**/test_*.py"]',
        'ignore = [".venv/**", "**/__pycache__/**", "build/**", "third_party/**"]',
        'store = ".stackmap"',
        'vector_store = "embedded"',
        "classify_threshold = 0.35",
        "",
        "# Ordered top to bottom.",
    ]
    generated = [f"{f}/**" for f in folders if Path(f).name.lower() in _GENERATED_DIRS]
    if generated:
        out[out.index("classify_threshold = 0.35") + 1 : 0] = [
            "# folders named as generated code: indexed, kept out of holes and findings",
            "generated = [" + ", ".join(_quote(g) for g in generated) + "]",
        ]
    structure = propose_structure(root)
    by_name = len(layers) >= _ENOUGH_BY_NAME and _names_fit(layers, structure)
    if not by_name and len(structure.layers) >= 2:
        if structure.python_roots:
            roots = ", ".join(_quote(r) for r in structure.python_roots)
            out.insert(out.index("classify_threshold = 0.35") + 1, f"python_roots = [{roots}]")
        out.insert(
            out.index("# Ordered top to bottom."),
            "# layers ranked from the code: a layer may use any layer below it; make it\n"
            '# "strict" (each layer only the one below) once the order is yours\n'
            'layering = "relaxed"\n',
        )
        out += _structural_layers(structure)
        layers = []
    elif not layers:
        out.append("# No layer folder recognised: add [[layers]] entries by hand.")
    for guess, paths in layers:
        description = (
            _readme_paragraph(root / paths[0])
            or _doc_paragraph(root, docs, guess.id)
            or guess.description
        )
        out += [
            "[[layers]]",
            f"id = {_quote(guess.id)}",
            f"name = {_quote(guess.title)}",
            "paths = [" + ", ".join(_quote(p + "/**") for p in paths) + "]",
            f"description = {_quote(description)}",
            "",
        ]
    ids = [g.id for g, _ in layers]
    for role, name, wanted in (
        ("compiler", "Compiler engineer", ("adapter", "compiler", "runtime")),
        ("runtime", "Runtime engineer", ("compiler", "runtime", "umd", "hal")),
        ("driver", "Driver engineer", ("umd", "hal", "kernels", "kmd", "firmware")),
    ):
        have = [i for i in ids if i in wanted]
        if have:
            out += [
                "[[roles]]",
                f"id = {_quote(role)}",
                f"name = {_quote(name)}",
                "layers = [" + ", ".join(_quote(i) for i in have) + "]",
                "interests = []",
                "",
            ]
    return "\n".join(out).rstrip() + "\n"
