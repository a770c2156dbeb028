"""Small BERT, GPT-2 and ViT models exported from transformers (``scripts/export_transformers.py``,
randomly initialised under a fixed seed, committed in ``fixtures/transformers``) through the
whole stack against onnxruntime, rtol 1e-3 / atol 1e-4 on every output.

The fixtures are what ``torch.onnx.export`` writes for these architectures: Gather embeddings,
LayerNormalization (opset 17) or its ReduceMean / Pow / Sqrt decomposition (opset 14), Erf GELU
(BERT, ViT) and the Tanh GELU (GPT-2), the attention mask through Unsqueeze / Cast / Sub / Mul,
GPT-2's causal mask through Slice / Where, ViT's Shape / Slice / Concat reshapes, Tanh poolers.
The inputs are fixed; BERT's attention mask pads the second sequence.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import pytest

from stack.adapter import import_model
from stack.compiler import CompiledModel
from stack.compiler.jit import shared_runtime

FIXTURES = Path(__file__).parent / "fixtures" / "transformers"
TABLE: dict[str, dict] = json.loads((FIXTURES / "models.json").read_text())

#: ops each export must carry (the patterns the test claims to exercise)
PATTERNS = {
    "bert": {"Gather", "LayerNormalization", "Erf", "Unsqueeze", "Cast", "Softmax", "Tanh"},
    "bert_opset14": {"Gather", "ReduceMean", "Pow", "Sqrt", "Erf", "Unsqueeze", "Cast", "Tanh"},
    "gpt2": {"Gather", "LayerNormalization", "Tanh", "Pow", "Where", "Split", "Gemm"},
    "vit": {"Conv", "Shape", "Slice", "Concat", "Expand", "Erf", "Softmax", "Tanh"},
}


def feeds_for(spec: dict, seed: int = 0) -> dict[str, np.ndarray]:
    """Fixed inputs for one export: token ids, a mask padding the second sequence, pixels."""
    rng = np.random.default_rng(seed)
    feeds: dict[str, np.ndarray] = {}
    for name, info in spec["inputs"].items():
        shape = tuple(info["shape"])
        if name == "input_ids":
            feeds[name] = rng.integers(0, 512, shape).astype(np.int64)
        elif name == "attention_mask":
            mask = np.ones(shape, np.int64)
            mask[1, -5:] = 0
            feeds[name] = mask
        else:
            feeds[name] = rng.standard_normal(shape).astype(np.float32)
    return feeds


def test_every_fixture_is_listed_and_carries_its_patterns() -> None:
    assert sorted(TABLE) == sorted(PATTERNS)
    assert sorted(p.name for p in FIXTURES.glob("*.onnx")) == sorted(
        spec["file"] for spec in TABLE.values()
    )
    for name, spec in TABLE.items():
        model = onnx.load(str(FIXTURES / spec["file"]))
        ops = Counter(n.op_type for n in model.graph.node)
        assert PATTERNS[name] <= set(ops), (name, PATTERNS[name] - set(ops))
        assert [o.name for o in model.graph.output] == spec["outputs"]
        assert model.opset_import[0].version == spec["opset"]


@pytest.mark.parametrize("name", sorted(PATTERNS))
def test_exported_transformer_matches_onnxruntime(name: str) -> None:
    spec = TABLE[name]
    path = str(FIXTURES / spec["file"])
    feeds = feeds_for(spec)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    refs = dict(zip(spec["outputs"], sess.run(spec["outputs"], feeds), strict=True))
    graph = import_model(path)
    compiled = CompiledModel(graph, runtime=shared_runtime())
    try:
        out = compiled.run(feeds)
    finally:
        compiled.close()
    assert sorted(graph.outputs) == sorted(spec["outputs"])
    for value in spec["outputs"]:
        diff = float(np.max(np.abs(out[value] - refs[value])))
        print(f"{name} {value}: max |stack - onnxruntime| = {diff:.2e}")
        assert out[value].shape == refs[value].shape
        np.testing.assert_allclose(out[value], refs[value], rtol=1e-3, atol=1e-4)
