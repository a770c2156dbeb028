"""The offline embedding function gives real, semantically ordered embeddings."""

from __future__ import annotations

import numpy as np

from mapper.embeddings import DIMENSIONS, default_embedder


def test_semantic_neighbours() -> None:
    release = (
        "Releasing device memory: the runtime waits on the fence of the last command "
        "that used a buffer, then frees the device allocation."
    )
    layout = "Layout transform pass: rewrites NCHW tensors to NHWC before convolution."
    query = "free device memory after the fence"
    vecs = default_embedder().embed([release, layout, query])
    assert vecs.shape == (3, DIMENSIONS)
    assert np.allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-4)
    assert vecs[2] @ vecs[0] > vecs[2] @ vecs[1] + 0.2


def test_batches_and_truncation_are_consistent() -> None:
    emb = default_embedder()
    texts = [f"kernel launch number {i}" for i in range(40)] + ["word " * 2000]
    together = emb.embed(texts)
    alone = emb.embed([texts[7]])
    assert np.allclose(together[7], alone[0], atol=1e-4)
    assert np.isfinite(together[-1]).all()
