"""``scripts/newop_history.py``: which merges are op changes, and how scores are pooled."""

from __future__ import annotations

import importlib.util
import os
import subprocess
from pathlib import Path
from types import ModuleType

REPO = Path(__file__).resolve().parents[2]


def _script() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "newop_history", REPO / "scripts/newop_history.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _git(root: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@x.invalid"}
    env |= {"GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@x.invalid", "HOME": str(root)}
    proc = subprocess.run(
        ["git", "-C", str(root), *args], capture_output=True, text=True, env=env, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def _branch_merge(root: Path, branch: str, subject: str) -> str:
    _git(root, "checkout", "-q", "-b", branch)
    (root / f"{branch}.txt").write_text(branch, encoding="utf-8")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", f"{branch} work")
    _git(root, "checkout", "-q", "main")
    _git(root, "merge", "-q", "--no-ff", branch, "-m", subject)
    return _git(root, "rev-parse", "HEAD")


def test_op_merges_oldest_first_and_nothing_else(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q", "-b", "main")
    (tmp_path / "a.txt").write_text("a", encoding="utf-8")
    _git(tmp_path, "add", ".")
    _git(tmp_path, "commit", "-q", "-m", "Merge the Fake op (like relu, not a merge)")
    first = _branch_merge(tmp_path, "gelu", "Merge the Gelu op (like relu, predicted blind at x)")
    _branch_merge(tmp_path, "perf", "Merge the small-model CPU work")
    last = _branch_merge(tmp_path, "pool", "Merge the LpPool op (like MaxPool) and a rule")
    assert _script().merges(tmp_path) == [("Gelu", "relu", first), ("LpPool", "MaxPool", last)]


def test_counts_recover_the_right_predictions_from_the_precision() -> None:
    counts = _script()._counts
    score = {"hits": ["a", "b"], "missed": ["c"], "extra": ["d"], "precision": 0.6667}
    assert counts(score) == {"found": 2, "truth": 3, "right": 2, "predicted": 3}
    every = {"hits": ["a"], "missed": [], "extra": [], "precision": 1.0}
    assert counts(every) == {"found": 1, "truth": 1, "right": 1, "predicted": 1}
    none = {"hits": [], "missed": ["a"], "extra": ["b", "c"], "precision": 0.0}
    assert counts(none) == {"found": 0, "truth": 1, "right": 0, "predicted": 2}


def test_the_pool_sums_each_ops_counts_before_dividing() -> None:
    pool = _script().Pool(("files",))
    first = {
        "files": {"hits": ["a"], "missed": ["b"], "extra": [], "recall": 0.5, "precision": 1.0}
    }
    second = {
        "files": {"hits": ["c", "d", "e"], "missed": [], "extra": ["f"], "recall": 1.0,
                  "precision": 0.75},
    }  # fmt: skip
    assert pool.row(first, op="A") == {"op": "A", "files": {"recall": 0.5, "precision": 1.0}}
    pool.row(second, op="B")
    # 4 found of 5, 4 right of 5 predicted: not the mean of the ops' figures (0.75, 0.875)
    assert pool.summary() == {
        "files": {"recall": 0.8, "precision": 0.8, "found": 4, "truth": 5, "right": 4,
                  "predicted": 5},
    }  # fmt: skip
