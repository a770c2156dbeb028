"""``stackmap eval new-op OP --at REV``: today's predictor, run blind on the parent of REV.

The parent revision is laid out in a temporary directory (``git archive``), ingested there
into a store of its own, and ``scenario new-op OP`` is walked on that map, so the prediction
never sees the change that added the op. It is then scored against ``REV^..REV`` (or the
range given) with :func:`~mapper.scenarios.newop_eval.compare_prediction`.
"""

from __future__ import annotations

import dataclasses
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from mapper.check.errors import RevisionError
from mapper.config import load_config
from mapper.impact.evaluate import config_for, export_tree
from mapper.impact.mapview import open_view
from mapper.scenarios.newop import walk_new_op
from mapper.scenarios.newop_eval import compare_prediction


def _parent(root: Path, rev: str) -> str:
    proc = subprocess.run(
        ["git", "-C", str(root), "rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}^"],
        capture_output=True,
        timeout=60,
        check=False,
    )
    if proc.returncode != 0:
        raise RevisionError(f"unknown revision or one without a parent: {rev!r}")
    return proc.stdout.decode().strip()


def predict_at(
    root: Path,
    op: str,
    rev: str,
    *,
    like: str | None = None,
    revisions: str | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Scores of the current predictor for ``op``, run on the parent of ``rev``, against
    ``revisions`` (default ``REV^..REV``). The answer carries the prediction it scored.

    RevisionError for an unknown revision; ConfigError when neither the parent nor the
    repository has a map configuration; UnknownNameError for an unknown ``like``.
    """
    from mapper.ingest import ingest

    root = root.resolve()
    parent = _parent(root, rev)
    base = load_config(root)
    with tempfile.TemporaryDirectory(prefix="stackmap-newop-") as tmp:
        tree = Path(tmp)
        if progress:
            progress(f"laying out {parent[:12]} and ingesting it")
        export_tree(root, parent, tree)
        config = config_for(tree, base)
        if config.module_lines is None:  # a convention stated since applies then too
            config = dataclasses.replace(config, module_lines=base.module_lines)
        ingest(tree, config, embed=False, progress=False)
        walk = walk_new_op(open_view(tree, config), op, like)
    prediction = walk.to_json()
    result = compare_prediction(prediction, root, revisions or f"{parent[:12]}..{rev}")
    result["at"] = {"revision": rev, "parent": parent[:12]}
    result["prediction"] = prediction
    return result
