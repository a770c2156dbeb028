"""The op-importer registry: ONNX op type -> importer function, with explicit ``register()``."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from stack.adapter.errors import UnsupportedOpError

if TYPE_CHECKING:
    import onnx

    from stack.adapter.context import ImportContext

Importer = Callable[["ImportContext", "onnx.NodeProto", str], None]
_IMPORTERS: dict[str, Importer] = {}


def register(*op_types: str) -> Callable[[Importer], Importer]:
    """Register an importer for one or more ONNX op types (decorator)."""

    def deco(fn: Importer) -> Importer:
        for op_type in op_types:
            _IMPORTERS[op_type] = fn
        return fn

    return deco


def importer_for(op_type: str, node_name: str) -> Importer:
    """The importer of ``op_type``; UnsupportedOpError naming the known ops when there is none."""
    _load()
    try:
        return _IMPORTERS[op_type]
    except KeyError:
        raise UnsupportedOpError(
            op_type, node_name, reason=f"no importer (supported: {', '.join(supported_ops())})"
        ) from None


def supported_ops() -> list[str]:
    """Every ONNX op type with an importer."""
    _load()
    return sorted(_IMPORTERS)


def _load() -> None:
    if _IMPORTERS:
        return
    from stack.adapter import (  # noqa: F401
        ops_attention,
        ops_bitcast,
        ops_causal_conv_with_state,
        ops_center_crop_pad,
        ops_composite,
        ops_deform_conv,
        ops_dft,
        ops_gru,
        ops_index,
        ops_linear_attention,
        ops_lstm,
        ops_math,
        ops_negative_log_likelihood_loss,
        ops_nn,
        ops_norm,
        ops_pointwise,
        ops_pool,
        ops_quant,
        ops_rearrange,
        ops_resize,
        ops_rnn,
        ops_rotary_embedding,
        ops_shape,
        ops_softmax_cross_entropy_loss,
    )
