"""Toy stacks for map tests: write a tree of files, ingest it without embeddings, open it."""

from __future__ import annotations

import textwrap
from pathlib import Path

from mapper.impact import MapView, open_view
from mapper.ingest import ingest


def build_view(
    root: Path, files: dict[str, str], config: str | None = None, *, dedent: bool = False
) -> MapView:
    """Write FILES (and CONFIG as stackmap.toml) under ROOT, ingest it, and open its map."""
    if config is not None:
        (root / "stackmap.toml").write_text(config, encoding="utf-8")
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        body = textwrap.dedent(text).lstrip() if dedent else text
        (root / path).write_text(body, encoding="utf-8")
    ingest(root, embed=False, progress=False)
    return open_view(root)
