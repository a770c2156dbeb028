"""Embeddings during ingest: a text-hash cache of vectors kept in the store, and the placing of
doc pages that name no layer on the layer whose description they are closest to."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

import numpy as np
import numpy.typing as npt

from mapper.config import StackmapConfig
from mapper.errors import StoreCorrupt
from mapper.ingest.build_docs import needs_layer, page_text
from mapper.ingest.docs import DocPage
from mapper.ingest.store import Store
from mapper.progress import bar

Vectors = Callable[[Sequence[str]], npt.NDArray[np.float32]]


class CachedVectors:
    """Embeds texts through a text-hash cache persisted in the store."""

    def __init__(self, store: Store, progress: bool = False) -> None:
        from mapper.index import text_hash

        self._progress = progress
        self._store = store
        try:
            self._cache = store.load_vectors()
        except StoreCorrupt as exc:
            print(f"stackmap: {exc}; computing the embeddings again", file=sys.stderr)
            self._cache = {}
        self._hash = text_hash
        self.computed = 0

    def __call__(self, texts: Sequence[str]) -> npt.NDArray[np.float32]:
        keys = [self._hash(t) for t in texts]
        missing = sorted(
            {k: t for k, t in zip(keys, texts, strict=True) if k not in self._cache}.items()
        )
        if missing:
            from mapper.embeddings import default_embedder  # loaded only when needed

            todo = [t for _, t in missing]
            with bar(self._progress, len(todo), "embedding") as tick:
                fresh = default_embedder().embed(todo, lambda done, _total: tick("", done))
            self.computed += len(missing)
            for (k, _), vec in zip(missing, fresh, strict=True):
                self._cache[k] = vec
        if not keys:
            return np.zeros((0, 384), np.float32)
        return np.stack([self._cache[k] for k in keys])

    def save(self) -> None:
        if self.computed:
            self._store.save_vectors(self._cache)


def vector_source(store: Store, progress: bool) -> CachedVectors:
    return CachedVectors(store, progress)


def classify(
    config: StackmapConfig, docs: dict[str, DocPage], vectors: Vectors
) -> dict[str, tuple[str | None, float]]:
    """page path → (closest layer, cosine similarity) for pages that need a layer."""
    pages = [p for p in sorted(docs) if needs_layer(docs[p])]
    if not pages or not config.layers:
        return {p: (None, 0.0) for p in pages}
    layer_texts = [f"{layer.name}: {layer.description}" for layer in config.layers]
    lv = vectors(layer_texts)
    pv = vectors([page_text(docs[p]) for p in pages])
    sims = pv @ lv.T
    out: dict[str, tuple[str | None, float]] = {}
    for i, path in enumerate(pages):
        best = int(np.argmax(sims[i]))
        out[path] = (config.layers[best].id, round(float(sims[i][best]), 4))
    return out
