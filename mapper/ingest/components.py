"""Components: declared by knowledge-base pages (front matter ``component`` and ``paths``) or
inferred from a layer's folder layout; which component a file belongs to."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from mapper.config import StackmapConfig, glob_regex
from mapper.ingest.docs import DocPage
from mapper.model import Provenance


@dataclass(frozen=True, slots=True)
class DeclaredComponent:
    id: str
    layer: str | None
    paths: tuple[str, ...]
    page: str
    front_matter: Mapping[str, Any]


def _specificity(glob: str) -> int:
    cut = min((glob.find(c) for c in "*?[" if c in glob), default=len(glob))
    return cut


@functools.lru_cache(maxsize=4096)
def _glob(glob: str) -> tuple[str, re.Pattern[str]]:
    """The literal prefix of a glob (its specificity is the prefix's length) and its regex:
    a path not starting with the prefix cannot match."""
    return glob[: _specificity(glob)], glob_regex(glob)


def declared_components(
    config: StackmapConfig, docs: Mapping[str, DocPage]
) -> dict[str, DeclaredComponent]:
    layer_ids = {layer.id for layer in config.layers}
    out: dict[str, DeclaredComponent] = {}
    for path in sorted(docs):
        fm = docs[path].front_matter
        cid = fm.get("component")
        if not isinstance(cid, str) or not cid or cid in out:
            continue
        layer = fm.get("layer") if fm.get("layer") in layer_ids else None
        prefix = cid.split(".", 1)[0]
        if layer is None and prefix in layer_ids:
            layer = prefix
        raw = fm.get("paths") or []
        paths = tuple(str(p) for p in raw) if isinstance(raw, list) else (str(raw),)
        out[cid] = DeclaredComponent(cid, layer, paths, path, fm)
    return out


def component_of(
    config: StackmapConfig, path: str, declared: Mapping[str, DeclaredComponent]
) -> tuple[str | None, Provenance]:
    """The component a file belongs to: the most specific declared glob, else inferred."""
    best: tuple[int, str] | None = None
    for comp in declared.values():
        for glob in comp.paths:
            prefix, pattern = _glob(glob)
            if path.startswith(prefix) and pattern.match(path):
                key = (-len(prefix), comp.id)
                best = key if best is None or key < best else best
    if best is not None:
        return best[1], Provenance.DOC
    layer = config.layer_of(path)
    if layer is None:
        return None, Provenance.INFERRED
    for glob in config.layer(layer).paths:
        if glob_regex(glob).match(path):
            root = glob[: _specificity(glob)]
            root = root[: root.rfind("/") + 1]
            rest = path[len(root) :]
            head = rest.split("/", 1)[0] if "/" in rest else PurePosixPath(rest).stem
            if head == "__init__":
                return None, Provenance.INFERRED
            return f"{layer}.{head}", Provenance.INFERRED
    return None, Provenance.INFERRED
