"""``stackmap eval impact``: impact's predictions against what real commits changed.

For each mined case (:mod:`mapper.impact.mining`) the parent commit is ingested into a
temporary store (one work tree reused, so each ingest parses only what changed), impact runs
on the changed definition, and its ranked files are compared with the files the commit
changed, beside two baselines measured on the same map in the same run:

- ``name``: every file of the parent naming the definition's short name (``git grep -w``);
- ``imports``: the defining file and the reverse-import closure of it on the map.

Four truths per case (:mod:`mapper.impact.mining` defines the first three): ``all``, every
file the commit changed that existed at the parent; ``related``, those among them whose changed
lines name the definition's short name as a word; ``call_sites``, those that used the
definition at the parent and whose changed lines call it, apply it as a decorator or (a page)
name it in a code span; ``resolved``, the ``call_sites`` less the files whose changed uses an
independent resolver attributes to other definitions (:mod:`mapper.impact.arbiter`: Jedi, on
both revisions; ``runner.invoke`` is ``CliRunner.invoke``, not the changed ``Command.invoke``)
— the call sites the commit updated, what the goal is measured on. Each case lists Jedi's
verdict per judged file (``jedi``). The ``resolved`` scores are also given apart for the
cases changing how calls are written and those changing only annotations (``by_change``).
Truths and predictions are both taken over the files and pages on the parent's map (a file
no map holds, such as a change log, is listed per case as ``unmapped``).
"""

from __future__ import annotations

import io
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mapper.config import StackmapConfig, load_config
from mapper.errors import ConfigError
from mapper.impact.analyse import impact_of
from mapper.impact.arbiter import Arbiter, Verdict, hunks, resolved
from mapper.impact.mapview import MapView, open_view
from mapper.impact.mining import Case, diff_text, mine, short_name, users_at
from mapper.impact.records import Mode
from mapper.model import EdgeKind, NodeKind

METHODS = ("precise", "conservative", "name", "imports")
# a change message about annotations only (``stackmap diff``'s wording)
_TYPES_ONLY = re.compile(r"^python \S+: (?:parameter '[^']*' type |return type )")
TRUTHS = ("all", "related", "call_sites", "resolved")


@dataclass(frozen=True, slots=True)
class Score:
    tp: int
    predicted: int
    truth: int

    @property
    def recall(self) -> float:
        return self.tp / self.truth if self.truth else 1.0

    @property
    def precision(self) -> float:
        return self.tp / self.predicted if self.predicted else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "recall": round(self.recall, 4),
            "precision": round(self.precision, 4),
            "tp": self.tp,
            "predicted": self.predicted,
            "truth": self.truth,
        }


def _score(predicted: set[str], truth: set[str]) -> Score:
    return Score(len(predicted & truth), len(predicted), len(truth))


def export_tree(root: Path, rev: str, tree: Path) -> None:
    """Lay ``rev`` out in ``tree``, keeping its map store (so the next ingest is incremental)."""
    for child in tree.iterdir():
        if child.name != ".stackmap-eval":
            shutil.rmtree(child) if child.is_dir() else child.unlink()
    proc = subprocess.run(
        ["git", "-C", str(root), "archive", "--format=tar", rev],
        capture_output=True,
        timeout=300,
        check=True,
    )
    with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as tar:
        tar.extractall(tree, filter="data")


def config_for(tree: Path, fallback: StackmapConfig) -> StackmapConfig:
    try:
        config = load_config(tree)
    except ConfigError:
        config = replace(fallback, root=tree)
    return replace(config, store=".stackmap-eval")


def _roots(tree: Path, config: StackmapConfig) -> tuple[str, ...]:
    """Python source roots for Jedi: the configured ones, or ``src`` in a src layout."""
    if config.python_roots:
        return config.python_roots
    return ("src",) if (tree / "src").is_dir() else ()


def _mapped(view: MapView) -> set[str]:
    """Paths of the files and pages on the map: what any of the methods can name."""
    kinds = (NodeKind.FILE, NodeKind.DOC)
    return {n.path for kind in kinds for n in view.nodes(kind) if n.path}


def _import_closure(view: MapView, path: str) -> set[str]:
    seen = {path}
    todo = [f"file:{path}"]
    while todo:
        for edge in view.neighbours(todo.pop(), {EdgeKind.IMPORTS}, "in"):
            node = view.node(edge.source)
            if node is not None and node.path and node.path not in seen:
                seen.add(node.path)
                todo.append(edge.source)
    return seen


def _one(
    root: Path,
    view: MapView,
    tree: Path,
    case: Case,
    arbiter: Arbiter,
    changes: dict[str, tuple[list[tuple[int, str]], list[tuple[int, str]]]],
) -> dict[str, Any]:
    mapped = _mapped(view)
    predicted: dict[str, set[str]] = {}
    for mode in (Mode.PRECISE, Mode.CONSERVATIVE):
        report = impact_of(view, tree, f"symbol:{case.qualname}", mode=mode)
        predicted[mode.value] = {f.path for f in report.files} | {case.path}
    predicted["name"] = users_at(root, case.parent, short_name(case.qualname))
    predicted["imports"] = _import_closure(view, case.path)
    predicted = {k: v & mapped for k, v in predicted.items()}
    kept, verdicts = resolved(arbiter, view, case.qualname, case.path, case.call_sites, changes)
    truths = {
        "all": set(case.changed) & mapped,
        "related": set(case.related) & mapped,
        "call_sites": set(case.call_sites) & mapped,
        "resolved": kept & mapped,
    }
    return {
        "unmapped": sorted(set(case.changed) - mapped),
        "commit": case.commit[:12],
        "subject": case.subject,
        "symbol": case.qualname,
        "how": list(case.messages),
        "change": "types_only"
        if all(_TYPES_ONLY.search(m) for m in case.messages)
        else "call_shape",
        "truth": {k: sorted(v) for k, v in truths.items()},
        "jedi": {p: _verdict_json(v) for p, v in sorted(verdicts.items())},
        "predicted": {k: sorted(v) for k, v in predicted.items()},
        "scores": {
            t: {m: _score(predicted[m], truths[t]).to_json() for m in METHODS} for t in TRUTHS
        },
    }


def _verdict_json(verdict: Verdict) -> dict[str, Any]:
    return {
        "calls": verdict.calls,
        "matched": list(verdict.matched),
        "other": list(verdict.other),
        "unknown": verdict.unknown,
        "kept": not verdict.elsewhere,
    }


def _by_change(cases: list[dict[str, Any]]) -> dict[str, Any]:
    """``resolved`` scores of the cases whose change alters how calls are written (a
    parameter added, removed, moved, a default) apart from those changing only annotations
    (which no call site has to follow): how many of each, and their micro scores."""
    out: dict[str, Any] = {}
    for kind in ("call_shape", "types_only"):
        some = [c for c in cases if c["change"] == kind]
        out[kind] = {"cases": len(some)}
        for m in METHODS:
            scores = [c["scores"]["resolved"][m] for c in some]
            tp, pred, truth = (sum(s[k] for s in scores) for k in ("tp", "predicted", "truth"))
            out[kind][m] = _score_of(tp, pred, truth)
    return out


def _overall(cases: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {"by_change": _by_change(cases)}
    for t in TRUTHS:
        out[t] = {}
        for m in METHODS:
            scores = [c["scores"][t][m] for c in cases]
            tp = sum(s["tp"] for s in scores)
            pred = sum(s["predicted"] for s in scores)
            truth = sum(s["truth"] for s in scores)
            n = len(scores) or 1
            out[t][m] = {
                "micro": _score_of(tp, pred, truth),
                "macro": {
                    "recall": round(sum(s["recall"] for s in scores) / n, 4),
                    "precision": round(sum(s["precision"] for s in scores) / n, 4),
                },
            }
    return out


def _score_of(tp: int, predicted: int, truth: int) -> dict[str, Any]:
    return Score(tp, predicted, truth).to_json()


def evaluate(
    repo: Path,
    commits: int,
    *,
    config: StackmapConfig | None = None,
    rev: str = "HEAD",
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Mine up to ``commits`` cases from ``repo`` and score impact and the baselines on each.

    ``config`` is the map configuration for revisions that carry no ``stackmap.toml`` of their
    own (default: the repository's current one). Synchronous; progress lines go to
    ``progress``. Raises ConfigError without any configuration, RevisionError when git fails.
    """
    from mapper.ingest import ingest

    say = progress or (lambda line: print(line, file=sys.stderr))
    repo = repo.resolve()
    base = config or load_config(repo)
    started = time.perf_counter()
    results: list[dict[str, Any]] = []
    skipped: list[dict[str, str]] = []
    with tempfile.TemporaryDirectory(prefix="stackmap-eval-") as tmp:
        tree, after = Path(tmp) / "tree", Path(tmp) / "after"
        tree.mkdir()
        after.mkdir()
        laid = ""  # the commit whose trees, map, diff and Jedi projects are laid out
        for case in mine(repo, base, commits, rev):
            say(f"{case.commit[:12]} {case.qualname}")
            if case.commit != laid:  # a commit's cases come together: lay it out once
                export_tree(repo, case.parent, tree)
                export_tree(repo, case.commit, after)
                cfg = config_for(tree, base)
                ingest(tree, cfg, embed=False, progress=False)
                view = open_view(tree, cfg)
                arbiter = Arbiter(tree, after, _roots(tree, cfg))
                changes = hunks(diff_text(repo, case.parent, case.commit))
                laid = case.commit
            if view.node(f"symbol:{case.qualname}") is None:
                skipped.append(
                    {
                        "commit": case.commit[:12],
                        "symbol": case.qualname,
                        "reason": "not on the parent's map",
                    }
                )
                continue
            results.append(_one(repo, view, tree, case, arbiter, changes))
    return {
        "repo": str(repo),
        "rev": rev,
        "cases": len(results),
        "skipped": skipped,
        "overall": _overall(results),
        "per_commit": results,
        "seconds": round(time.perf_counter() - started, 2),
    }
