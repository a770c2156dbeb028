"""Compare a saved ``scenario new-op --json`` prediction with the change that added the op.

The real change is a revision range: the files it touched whose changed lines spell the op
(so a range holding other work too can be used), and the definitions it added whose names spell
the op (functions, classes, methods, enum members, C macros, proto values, tests). Files the
repository's map configuration ignores (generated gRPC code) are not on the map, so they are
left out of the truth (listed as ``ignored_files``; ``files_with_ignored`` scores with them).
Recall and precision are given per file and per symbol; per file also over the files that
existed before the change (``existing_files``), since a file the change creates (``new_files``:
a new family module, say) has no path a footprint could name. Per symbol, the prediction's new
definitions (names spelling the op; code to extend counts per file) are matched with the added
ones when their last two name components agree, spelt compact (``...ids.KernelId.GELU``
matches a ``GELU`` member of ``KernelId`` wherever it was put; ``conv_transpose`` matches
``ConvTranspose``).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from mapper.config import StackmapConfig, load_config
from mapper.errors import ConfigError
from mapper.impact.changes import added_definitions, changed_files, parse_range
from mapper.impact.mining import diff_by_file
from mapper.scenarios import vocab


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

    RevisionError for a range git cannot resolve.
    """
    spec = parse_range(root, revisions)
    files = changed_files(root, spec)
    spelt = {vocab.compact(prediction["op"])}
    lines = diff_by_file(root, spec.old, spec.new or "HEAD")
    spelling = {
        f.path
        for f in files
        if any(vocab.runs(w) & spelt for w in re.findall(r"\w+", lines.get(f.path, "")))
    }
    config = _config(root)
    ignored = {p for p in spelling if config is not None and config.is_ignored(p)}
    real_files = spelling - ignored
    added = {
        name
        for path, name in added_definitions(root, spec, files)
        if vocab.runs(_last(name)) & spelt and path not in ignored
    }
    predicted_symbols = {  # the new definitions it names (code to extend is scored per file)
        s
        for s in prediction["symbols"]
        if s and not s.startswith("doc:") and vocab.runs(_last(s)) & spelt
    }
    doc_files = {p["path"] for p in _points(prediction) if p["kind"] == "doc" and p["path"]}
    created = {f.path for f in files if f.status == "added"} & real_files
    return {
        "op": prediction["op"],
        "like": prediction["like"],
        "range": revisions,
        "files": _files(set(prediction["files"]), real_files),
        "ignored_files": sorted(ignored),
        "files_with_ignored": _files(set(prediction["files"]), spelling),
        "new_files": sorted(created),
        "existing_files": _files(set(prediction["files"]), real_files - created),
        "symbols": _score(predicted_symbols, added),
        "docs_predicted": sorted(doc_files),
    }


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
