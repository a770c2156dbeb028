"""Export small, randomly initialised BERT, GPT-2 and ViT models to ONNX (fixtures).

Needs the optional extra ``pip install '.[export]'`` (torch and transformers from PyPI; not a
test dependency). Each configuration is tiny (2 layers, hidden 64, 4 heads) so a file is a few
hundred kB; weights come from the library's own initialisation under a fixed seed. The models
are exported the usual way (``torch.onnx.export``, opset 17, eval mode), so the graphs carry
what real exports carry: Gather embeddings, ReduceMean / Pow / Sqrt layer norms or
LayerNormalization, Erf or Tanh GELU, Cast / Unsqueeze / Where masks, Shape / Slice / Concat
reshapes.

Usage: ``python scripts/export_transformers.py OUT_DIR`` writes ``bert.onnx``, ``gpt2.onnx``
and ``vit.onnx`` with their input shapes in ``shapes.json``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

OPSET = 17
SMALL = {"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4}


def _models() -> dict[str, tuple[Any, dict[str, Any]]]:
    import torch
    from transformers import (
        BertConfig,
        BertModel,
        GPT2Config,
        GPT2Model,
        ViTConfig,
        ViTModel,
    )

    torch.manual_seed(0)
    bert = BertModel(BertConfig(intermediate_size=128, vocab_size=1000, **SMALL))
    gpt2 = GPT2Model(GPT2Config(n_layer=2, n_embd=64, n_head=4, vocab_size=1000, n_positions=64))
    vit = ViTModel(ViTConfig(image_size=32, patch_size=8, intermediate_size=128, **SMALL))
    ids = torch.randint(0, 1000, (1, 16))
    return {
        "bert": (bert, {"input_ids": ids, "attention_mask": torch.ones(1, 16, dtype=torch.int64)}),
        "gpt2": (gpt2, {"input_ids": ids}),
        "vit": (vit, {"pixel_values": torch.randn(1, 3, 32, 32)}),
    }


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    import torch

    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    shapes: dict[str, dict[str, list[int]]] = {}
    for name, (model, feeds) in _models().items():
        model.eval()
        path = out / f"{name}.onnx"
        with torch.no_grad():
            torch.onnx.export(
                model,
                (),
                str(path),
                kwargs=feeds,
                input_names=list(feeds),
                output_names=["last_hidden_state"],
                opset_version=OPSET,
                dynamo=False,
            )
        shapes[name] = {k: list(v.shape) for k, v in feeds.items()}
        print(f"wrote {path} ({path.stat().st_size} B)", file=sys.stderr)
    (out / "shapes.json").write_text(json.dumps(shapes, indent=2, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
