"""ROTARY_EMBEDDING's ABI, registered into :data:`stack.kmd.kernels.abi.ABIS` when that module
is imported (abi.py is near its 300 lines); the conventions are :mod:`stack.kmd.kernels.abi`'s.

ONNX's inputs in ONNX's order and names (X, cos_cache, sin_cache, then the optional
position_ids) and its one output Y of X's shape; ONNX's three int attributes as immediates, in
the order the kernel reads them; no grid axis (the rotation runs whole)."""

from __future__ import annotations

from stack.kmd.kernels.abi import Imm, KernelAbi, register
from stack.kmd.kernels.ids import KernelId

register(
    KernelAbi(
        KernelId.ROTARY_EMBEDDING, ("X", "cos_cache", "sin_cache"), ("Y",),
        optional=("position_ids",),
        ints=(
            Imm("interleaved", 0, "1: the pairs are channels (2k, 2k+1), 0: (k, R/2 + k)"),
            Imm("num_heads", 0, "H of a 3-D X [B, S, H * D]; unused for a 4-D X"),
            Imm("rotary_embedding_dim", 0, "R, the channels rotated per head; 0: the head size"),
        ),
        doc="ONNX RotaryEmbedding: X[B,H,S,D] or X[B,S,H*D], cos_cache/sin_cache[P,R/2] read at "
        "position_ids[B,S] (or [B,S,R/2] without them) -> Y of X's shape: each pair (x1, x2) "
        "of the first R channels per head -> (cos x1 - sin x2, sin x1 + cos x2), the rest "
        "copied (float64, rounded once).",
    )
)  # fmt: skip
