"""Compare a saved ``scenario new-op --json`` prediction with the change that added the op.

The real change is a revision range: the files it touched whose changed lines spell the op
(so a range holding other work too can be used), and the definitions it added whose names spell
the op (functions, classes, methods, enum members, C macros, proto values, tests). Files the
repository's map configuration ignores (generated gRPC code) are not on the map, so they are
left out of the truth (listed as ``ignored_files``; ``files_with_ignored`` scores with them).
Recall and precision are given per file and per symbol; per file also over the files that
existed before the change (``existing_files``), since a file the change creates (``new_files``:
a new family module, say) has no path a footprint could name. A predicted file the
configuration ignores is scored only in ``files_with_ignored``, as the truth's are. A changed
file outside the stack the map describes (in no layer, doc folder, contract folder or test
glob: the tool's own code naming the op in a range since a saved prediction) is listed as
``unmapped_files`` and left out of both. Lines naming a file the map ignores whose
name spells the op (the saved prediction itself), and the lines changed with them, are
bookkeeping, not the op's change (:func:`~mapper.scenarios.newop_truth.bookkeeping`); those
files are listed as ``bookkeeping``.

Per symbol (:mod:`.newop_truth`), ``symbols`` scores every definition the change touched for
the op (added, or extended by a line spelling it) against the prediction's new definitions
and the enclosing definitions of its use and registration points; ``new_symbols`` scores
only the added ones against the new definitions. Names match when their last two components
agree, spelt compact (``...ids.KernelId.GELU`` matches a ``GELU`` member of ``KernelId``
wherever it was put; ``conv_transpose`` matches ``ConvTranspose``); a bare name by itself.
``code_symbols`` scores as ``symbols`` does, leaving out the definitions of test modules: a
test's name is whatever its author chose (``test_the_graph_compiles_to_one_x_op``), where a
table, an enum value or a translator class has the one place and name the stack's layers
require; the test modules themselves are scored per file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mapper.check.errors import RevisionError
from mapper.config import StackmapConfig, load_config
from mapper.errors import ConfigError
from mapper.impact.changes import changed_files, parse_range
from mapper.impact.mining import changed_lines, diff_text
from mapper.ingest.code import python_module
from mapper.scenarios import newop_truth, vocab


def _parts(name: str) -> list[str]:
    """Name components, compact (``conv_transpose`` and ``ConvTranspose`` agree)."""
    name = name.removeprefix("symbol:").rpartition(":")[2]  # C and proto ids carry a path
    return [vocab.compact(p) or p.lower() for p in name.split(".") if p]


def _matches(predicted: str, real: str) -> bool:
    """Same owner and name (``KernelId.GELU``); a bare predicted name (a test) by name alone."""
    p, r = _parts(predicted), _parts(real)
    if not p or not r:
        return False
    return p[-2:] == r[-2:] if len(p) > 1 else p[-1] == r[-1]


def _last(name: str) -> str:
    return name.removeprefix("symbol:").rpartition(":")[2].rpartition(".")[2]


def _score(predicted: set[str], real: set[str]) -> dict[str, Any]:
    found = {r for r in real if any(_matches(p, r) for p in predicted)}
    right = {p for p in predicted if any(_matches(p, r) for r in real)}
    return {
        "recall": round(len(found) / len(real), 4) if real else 1.0,
        "precision": round(len(right) / len(predicted), 4) if predicted else 0.0,
        "hits": sorted(found),
        "missed": sorted(real - found),
        "extra": sorted(predicted - right),
    }


def compare_prediction(prediction: dict[str, Any], root: Path, revisions: str) -> dict[str, Any]:
    """Scores of ``prediction`` against the range ``revisions`` (``A..B``) of ``root``.

    RevisionError for a range git cannot resolve, and for one that changes no mapped file
    naming the op (nothing to score against).
    """
    spec = parse_range(root, revisions)
    files = changed_files(root, spec)
    spelt = {vocab.compact(prediction["op"])}
    changed = changed_lines(diff_text(root, spec.old, spec.new or "HEAD"))
    config = _config(root)

    def ignored(path: str) -> bool:
        return config is not None and config.is_ignored(path)

    skip = newop_truth.bookkeeping(root, spec.new or "HEAD", ignored, spelt)
    spelling = {
        f.path
        for f in files
        if newop_truth.spells(newop_truth.kept_text(changed.get(f.path, ()), skip), spelt)
    }

    def mapped(path: str) -> bool:  # in a layer, a doc, a contract or a test of the map
        if config is None:
            return True
        contracts = config.contracts.rstrip("/") + "/"
        return bool(
            config.layer_of(path)
            or config.is_test(path)
            or config.is_document(path)
            or path.startswith(contracts)
        )

    unmapped = {p for p in spelling if not mapped(p)}
    spelling -= unmapped
    real_files = {p for p in spelling if not ignored(p)}
    if not real_files:  # scoring against nothing would read recall 1.0
        raise RevisionError(
            f"{revisions} changes no mapped file that names {prediction['op']}: nothing to "
            "score the prediction against (--at names the commit that added the op)"
        )
    added, extended = newop_truth.touched(
        root, spec, [f for f in files if f.path in real_files], spelt, changed, skip
    )
    named = {  # the new definitions it names
        s
        for s in prediction["symbols"]
        if s and not s.startswith("doc:") and vocab.runs(_last(s)) & spelt
    }
    predicted_files = set(prediction["files"])
    predicted_symbols = named | _extended(prediction, spelt)
    tests = _test_modules(config, predicted_files | real_files)
    created = {f.path for f in files if f.status == "added"} & real_files
    return {
        "op": prediction["op"],
        "like": prediction["like"],
        "range": revisions,
        "files": _files({p for p in predicted_files if not ignored(p)}, real_files),
        "ignored_files": sorted(spelling - real_files),
        "unmapped_files": sorted(unmapped),
        "bookkeeping": sorted(skip),
        "files_with_ignored": _files(predicted_files, spelling),
        "new_files": sorted(created),
        "existing_files": _files(
            {p for p in predicted_files if not ignored(p)}, real_files - created
        ),
        "symbols": _score(predicted_symbols, added | extended),
        "code_symbols": _score(
            {s for s in predicted_symbols if not _in(s, tests)},
            {s for s in added | extended if not _in(s, tests)},
        ),
        "new_symbols": _score(named, added),
        "docs_predicted": sorted(
            {p["path"] for p in _points(prediction) if p["kind"] == "doc" and p["path"]}
        ),
    }


def _extended(prediction: dict[str, Any], spelt: set[str]) -> set[str]:
    """The existing definitions the prediction says gain a line for the op: the enclosing
    definitions of its use and registration points (not a path, not a new definition)."""
    return {
        p["predicted"]
        for p in _points(prediction)
        if p["kind"] in ("use", "registration")
        and p["predicted"]
        and "/" not in p["predicted"]
        and not vocab.runs(_last(p["predicted"])) & spelt
    }


def _test_modules(config: StackmapConfig | None, paths: set[str]) -> set[str]:
    """The Python modules of the test files among ``paths`` (none without a configuration)."""
    if config is None:
        return set()
    roots = config.python_roots
    return {python_module(p, roots) for p in paths if p.endswith(".py") and config.is_test(p)}


def _in(symbol: str, modules: set[str]) -> bool:
    """Whether ``symbol`` (a qualified name) is defined in one of ``modules``."""
    return any(symbol.startswith(f"{m}.") for m in modules)


def _config(root: Path) -> StackmapConfig | None:
    """The repository's map configuration (None without one: nothing is left out)."""
    try:
        return load_config(root)
    except ConfigError:
        return None


def _points(prediction: dict[str, Any]) -> list[dict[str, Any]]:
    out = [p for plan in prediction["layers"] for p in plan["points"]]
    return out + list(prediction.get("outside_layers", []))


def _files(predicted: set[str], real: set[str]) -> dict[str, Any]:
    hit = predicted & real
    return {
        "recall": round(len(hit) / len(real), 4) if real else 1.0,
        "precision": round(len(hit) / len(predicted), 4) if predicted else 0.0,
        "hits": sorted(hit),
        "missed": sorted(real - predicted),
        "extra": sorted(predicted - real),
    }
