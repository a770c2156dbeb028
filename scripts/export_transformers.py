"""Export small, randomly initialised BERT, GPT-2 and ViT models to ONNX (test fixtures).

Needs the optional extra ``pip install '.[export]'`` (torch and transformers from PyPI; not a
test dependency). Each configuration is tiny (2 layers, hidden 64, 4 heads, vocabulary 512) so
a file is a few hundred kB; weights come from the library's own initialisation under a fixed
seed. The models are exported the usual way (``torch.onnx.export``'s TorchScript exporter, eval
mode, the eager attention path), so the graphs carry what real exports carry: Gather
embeddings, Erf or Tanh GELU, Cast / Unsqueeze / Where masks, Shape / Slice / Concat reshapes,
a Tanh pooler. BERT is exported twice: at opset 17 (one LayerNormalization node per norm) and
at opset 14 (the ReduceMean / Sub / Pow / Sqrt / Div decomposition).

Usage: ``python scripts/export_transformers.py OUT_DIR`` writes ``bert.onnx``,
``bert_opset14.onnx``, ``gpt2.onnx`` and ``vit.onnx``, and ``models.json`` naming each file's
inputs (shape, dtype) and outputs. Transformers 4.46 is the version used: from 4.48 on its
mask builder runs under ``torch.vmap``, which the TorchScript exporter cannot trace.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

SMALL = {"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4}
#: the plain attention path (no fused scaled-dot-product kernel)
EAGER = {"attn_implementation": "eager"}
BATCH, SEQ, VOCAB = 2, 16, 512


def _models() -> list[tuple[str, Any, dict[str, Any], list[str], int]]:
    """(name, model, example feeds, output names, opset) for each export."""
    import torch
    from transformers import BertConfig, BertModel, GPT2Config, GPT2Model, ViTConfig, ViTModel

    torch.manual_seed(0)
    bert = BertModel(
        BertConfig(
            vocab_size=VOCAB, intermediate_size=128, max_position_embeddings=64, **SMALL, **EAGER
        )
    )
    gpt2 = GPT2Model(
        GPT2Config(
            vocab_size=VOCAB,
            n_layer=2,
            n_embd=64,
            n_head=4,
            n_positions=64,
            use_cache=False,
            **EAGER,
        )
    )
    vit = ViTModel(ViTConfig(image_size=32, patch_size=8, intermediate_size=128, **SMALL, **EAGER))
    ids = torch.randint(0, VOCAB, (BATCH, SEQ))
    mask = torch.ones(BATCH, SEQ, dtype=torch.int64)
    mask[1, SEQ - 5 :] = 0  # the second sequence is padded: the mask takes part in the trace
    bert_feeds = {"input_ids": ids, "attention_mask": mask}
    pooled = ["last_hidden_state", "pooler_output"]
    return [
        ("bert", bert, bert_feeds, pooled, 17),
        ("bert_opset14", bert, bert_feeds, pooled, 14),
        ("gpt2", gpt2, {"input_ids": ids}, ["last_hidden_state"], 17),
        ("vit", vit, {"pixel_values": torch.randn(BATCH, 3, 32, 32)}, pooled, 17),
    ]


def _describe(value: Any) -> dict[str, Any]:
    return {"shape": list(value.shape), "dtype": str(value.dtype).removeprefix("torch.")}


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    import torch

    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    table: dict[str, dict[str, Any]] = {}
    for name, model, feeds, outputs, opset in _models():
        model.eval()
        path = out / f"{name}.onnx"
        with torch.no_grad():
            torch.onnx.export(
                model,
                (),
                str(path),
                kwargs=feeds,
                input_names=list(feeds),
                output_names=outputs,
                opset_version=opset,
                dynamo=False,
            )
        table[name] = {
            "file": path.name,
            "opset": opset,
            "inputs": {k: _describe(v) for k, v in feeds.items()},
            "outputs": outputs,
        }
        print(f"wrote {path} ({path.stat().st_size} B)", file=sys.stderr)
    (out / "models.json").write_text(json.dumps(table, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
