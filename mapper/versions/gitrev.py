"""Materialise two git revisions in temporary directories and diff their surfaces."""

from __future__ import annotations

import io
import subprocess
import tarfile
import tempfile
from dataclasses import replace
from pathlib import Path

from mapper.check.errors import RevisionError
from mapper.config import StackmapConfig, load_config
from mapper.errors import ConfigError
from mapper.versions.compare import Change, compare_surfaces
from mapper.versions.surface import surface_of


def _export(root: Path, rev: str, dest: Path) -> None:
    """``git archive REV`` of the repository holding ``root``, unpacked at ``dest``."""
    try:
        proc = subprocess.run(
            ["git", "-C", str(root), "archive", "--format=tar", rev, "."],
            capture_output=True,
            timeout=120,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RevisionError(f"git could not run: {exc}", revision=rev) from exc
    if proc.returncode != 0:
        message = proc.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RevisionError(
            f"cannot read revision {rev!r}: {message[-1] if message else 'git archive failed'}",
            revision=rev,
        )
    with tarfile.open(fileobj=io.BytesIO(proc.stdout)) as tar:
        tar.extractall(dest, filter="data")


def diff_revisions(root: Path, rev_a: str, rev_b: str) -> list[Change]:
    """Interface changes from ``rev_a`` to ``rev_b`` of the repository at ``root``.

    Each revision is read with its own ``stackmap.toml`` (the current one when a revision has
    none). Raises RevisionError for a revision git cannot resolve.
    """
    root = root.resolve()
    with tempfile.TemporaryDirectory(prefix="stackmap-diff-") as tmp:
        trees = []
        for name, rev in (("a", rev_a), ("b", rev_b)):
            dest = Path(tmp) / name
            dest.mkdir()
            _export(root, rev, dest)
            trees.append(dest)
        surfaces = []
        for tree in trees:
            try:
                config = load_config(tree)
            except ConfigError:
                config = None
            surfaces.append(surface_of(tree, config or _rebased(root, tree)))
    return compare_surfaces(surfaces[0], surfaces[1])


def _rebased(root: Path, tree: Path) -> StackmapConfig:
    """The current config, for a revision that has none of its own."""
    return replace(load_config(root), root=tree)
