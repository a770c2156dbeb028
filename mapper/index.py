"""The vector index: Chroma with the offline MiniLM embedding function.

``vector_store = "embedded"`` (the default) opens a ``PersistentClient`` under
``<store>/chroma``; ``vector_store = "http://HOST:PORT"`` points the same code at a ``chroma
run`` server through ``HttpClient``. Telemetry is off. The collection is declared with
:class:`MiniLMEmbeddingFunction`, registered with Chroma under ``stackmap-minilm`` so Chroma
never falls back to its default (downloading) function.

:meth:`VectorIndex.sync` makes the collection hold exactly the given chunks: it deletes ids
no longer wanted, and upserts chunks whose content hash changed (embedding only texts not in
the vector cache). Synchronous; a crash mid-sync leaves a collection the next sync repairs.
Errors: StoreError when the store cannot be opened or reached, StoreCorrupt when Chroma
fails on its own database (``stackmap ingest`` rebuilds a damaged embedded index).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import sqlite3
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import numpy as np
import numpy.typing as npt

from mapper.config import StackmapConfig
from mapper.errors import StoreCorrupt, StoreError

COLLECTION = "stackmap"
_BATCH = 2000

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")


@dataclass(frozen=True, slots=True)
class Chunk:
    id: str  # the node id
    text: str
    metadata: Mapping[str, str | int | float | bool]

    @property
    def text_hash(self) -> str:
        return text_hash(self.text)

    @property
    def content_hash(self) -> str:
        items = repr(sorted(self.metadata.items())) + "\x00" + self.text
        return hashlib.blake2b(items.encode("utf-8"), digest_size=12).hexdigest()


@dataclass(frozen=True, slots=True)
class Hit:
    id: str
    score: float  # cosine similarity, higher is closer
    text: str
    metadata: Mapping[str, Any]


def collection_name(stack: str) -> str:
    """``stackmap-<stack>`` in the characters Chroma allows (one collection per stack)."""
    clean = re.sub(r"[^A-Za-z0-9._-]+", "-", stack).strip("-._") or "stack"
    return f"{COLLECTION}-{clean}"[:120]


def text_hash(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=12).hexdigest()


def _embedding_function() -> Any:
    from chromadb.api.types import Documents, EmbeddingFunction, Embeddings
    from chromadb.utils.embedding_functions import register_embedding_function

    class MiniLMEmbeddingFunction(EmbeddingFunction[Documents]):
        """all-MiniLM-L6-v2 int8 on onnxruntime, from wheel-shipped files only."""

        def __init__(self) -> None:
            pass

        def __call__(self, input: Documents) -> Embeddings:  # Chroma's parameter name
            from mapper.embeddings import default_embedder

            return list(default_embedder().embed(list(input)))

        @staticmethod
        def name() -> str:
            return "stackmap-minilm"

        def default_space(self) -> Any:
            return "cosine"

        def supported_spaces(self) -> Any:
            return ["cosine"]

        @staticmethod
        def build_from_config(config: dict[str, Any]) -> MiniLMEmbeddingFunction:
            return MiniLMEmbeddingFunction()

        def get_config(self) -> dict[str, Any]:
            return {"model": "all-MiniLM-L6-v2-int8"}

    with contextlib.suppress(ValueError):  # already registered in this process
        register_embedding_function(MiniLMEmbeddingFunction)
    return MiniLMEmbeddingFunction()


@contextlib.contextmanager
def _chroma_errors(store: str) -> Iterator[None]:
    """Chroma's own failures (a damaged database, a server error) as StoreCorrupt."""
    from chromadb.errors import ChromaError

    try:
        yield
    except (ChromaError, sqlite3.Error) as exc:
        raise StoreCorrupt(
            f"the vector index is damaged ({type(exc).__name__}: {exc}); "
            "run `stackmap ingest` to rebuild it",
            store=store,
        ) from exc


class VectorIndex:
    """One Chroma collection of map chunks (docs, symbols, interfaces, layers, components)."""

    def __init__(
        self, store_path: Path, vector_store: str = "embedded", name: str = COLLECTION
    ) -> None:
        import chromadb
        from chromadb.config import Settings

        settings = Settings(anonymized_telemetry=False, allow_reset=False)
        self._store = vector_store
        with _chroma_errors(vector_store):
            try:
                if vector_store == "embedded":
                    store_path.mkdir(parents=True, exist_ok=True)
                    self._client = chromadb.PersistentClient(
                        path=str(store_path / "chroma"), settings=settings
                    )
                else:
                    url = urlparse(vector_store)
                    self._client = chromadb.HttpClient(
                        host=url.hostname or "127.0.0.1",
                        port=url.port or 8000,
                        ssl=url.scheme == "https",
                        settings=settings,
                    )
                self._collection = self._client.get_or_create_collection(
                    collection_name(name),
                    embedding_function=_embedding_function(),
                    metadata={"hnsw:space": "cosine"},
                )
            except (ValueError, OSError, ConnectionError) as exc:
                raise StoreError(
                    f"cannot open the vector store: {exc}", store=vector_store
                ) from exc

    @classmethod
    def for_config(cls, config: StackmapConfig) -> VectorIndex:
        """The index a config names: its vector store, one collection per stack name."""
        return cls(config.store_path, config.vector_store, config.name)

    def contents(self) -> dict[str, Mapping[str, Any]]:
        """Every id in the collection with its metadata."""
        with _chroma_errors(self._store):
            got = self._collection.get(include=["metadatas"])
        metas = got.get("metadatas") or []
        return {i: dict(m or {}) for i, m in zip(got["ids"], metas, strict=True)}

    def delete(self, ids: Sequence[str]) -> None:
        """Remove chunks by id (unknown ids are ignored)."""
        if ids:
            self._collection.delete(ids=list(ids))

    def count(self) -> int:
        return int(self._collection.count())

    def sync(
        self,
        chunks: Sequence[Chunk],
        vectors: Callable[[Sequence[str]], npt.NDArray[np.float32]],
        current: Mapping[str, str] | None = None,
    ) -> dict[str, int]:
        """Make the collection hold exactly ``chunks``; ``vectors`` embeds a list of texts.

        ``current`` (id → content hash) is what the caller knows the collection holds; when
        None the collection is read to find out.
        """
        with _chroma_errors(self._store):
            return self._sync(chunks, vectors, current)

    def _sync(
        self,
        chunks: Sequence[Chunk],
        vectors: Callable[[Sequence[str]], npt.NDArray[np.float32]],
        current: Mapping[str, str] | None,
    ) -> dict[str, int]:
        if current is None:
            current = {i: str(m.get("hash")) for i, m in self.contents().items()}
        wanted = {c.id: c for c in chunks}
        stale = sorted(set(current) - set(wanted))
        for start in range(0, len(stale), _BATCH):
            self._collection.delete(ids=stale[start : start + _BATCH])
        todo = [c for c in chunks if current.get(c.id) != c.content_hash]
        matrix = vectors([c.text for c in todo]) if todo else np.zeros((0, 384), np.float32)
        for start in range(0, len(todo), _BATCH):
            part = todo[start : start + _BATCH]
            self._collection.upsert(
                ids=[c.id for c in part],
                embeddings=matrix[start : start + len(part)],
                documents=[c.text for c in part],
                metadatas=[{**c.metadata, "hash": c.content_hash} for c in part],
            )
        return {"chunks": len(wanted), "upserted": len(todo), "deleted": len(stale)}

    def query(
        self, vector: npt.NDArray[np.float32], n: int = 10, where: Mapping[str, Any] | None = None
    ) -> list[Hit]:
        with _chroma_errors(self._store):
            result = self._collection.query(
                query_embeddings=[vector.tolist()],
                n_results=max(1, n),
                where=dict(where) if where else None,
                include=["documents", "metadatas", "distances"],
            )
        ids = result["ids"][0]
        docs = (result.get("documents") or [[]])[0]
        metas = (result.get("metadatas") or [[]])[0]
        dists = (result.get("distances") or [[]])[0]
        return [
            Hit(i, 1.0 - float(d), t or "", dict(m or {}))
            for i, t, m, d in zip(ids, docs, metas, dists, strict=True)
        ]
