"""Op translators, one per op family (stage 3 semantic parse and stage 4 shape inference)."""

from __future__ import annotations

from stack.umd.registry import TranslatorRegistry
from stack.umd.translators.affine_grid import AffineGridTranslator
from stack.umd.translators.attention import AttentionTranslator
from stack.umd.translators.bitcast import BitCastTranslator
from stack.umd.translators.causal_conv_with_state import CausalConvWithStateTranslator
from stack.umd.translators.col2im import Col2ImTranslator
from stack.umd.translators.conv_integer import ConvIntegerTranslator
from stack.umd.translators.conv_pool import ConvPoolTranslator
from stack.umd.translators.conv_transpose import ConvTransposeTranslator
from stack.umd.translators.data import DataTranslator
from stack.umd.translators.deform_conv import DeformConvTranslator
from stack.umd.translators.det import DetTranslator
from stack.umd.translators.dft import DFTTranslator
from stack.umd.translators.einsum import EinsumTranslator
from stack.umd.translators.elementwise import ElementwiseTranslator
from stack.umd.translators.grid_sample import GridSampleTranslator
from stack.umd.translators.gru import GRUTranslator
from stack.umd.translators.index import IndexTranslator
from stack.umd.translators.linear import LinearTranslator
from stack.umd.translators.linear_attention import LinearAttentionTranslator
from stack.umd.translators.lstm import LSTMTranslator
from stack.umd.translators.negative_log_likelihood_loss import NegativeLogLikelihoodLossTranslator
from stack.umd.translators.norm import NormTranslator
from stack.umd.translators.pointwise import PointwiseTranslator
from stack.umd.translators.qlinear_conv import QLinearConvTranslator
from stack.umd.translators.quant import QuantTranslator
from stack.umd.translators.reduce import ReduceTranslator
from stack.umd.translators.rnn import RNNTranslator
from stack.umd.translators.rotary_embedding import RotaryEmbeddingTranslator
from stack.umd.translators.softmax_cross_entropy_loss import SoftmaxCrossEntropyLossTranslator
from stack.umd.translators.swiglu import SwiGLUTranslator
from stack.umd.translators.unpool import MaxUnpoolTranslator

__all__ = [
    "AffineGridTranslator",
    "AttentionTranslator",
    "BitCastTranslator",
    "CausalConvWithStateTranslator",
    "Col2ImTranslator",
    "ConvIntegerTranslator",
    "ConvPoolTranslator",
    "ConvTransposeTranslator",
    "DFTTranslator",
    "DataTranslator",
    "DeformConvTranslator",
    "DetTranslator",
    "EinsumTranslator",
    "ElementwiseTranslator",
    "GRUTranslator",
    "GridSampleTranslator",
    "IndexTranslator",
    "LSTMTranslator",
    "LinearAttentionTranslator",
    "LinearTranslator",
    "MaxUnpoolTranslator",
    "NegativeLogLikelihoodLossTranslator",
    "NormTranslator",
    "PointwiseTranslator",
    "QLinearConvTranslator",
    "QuantTranslator",
    "RNNTranslator",
    "ReduceTranslator",
    "RotaryEmbeddingTranslator",
    "SoftmaxCrossEntropyLossTranslator",
    "SwiGLUTranslator",
    "default_translators",
]


def default_translators() -> TranslatorRegistry:
    """A registry with every built-in translator registered."""
    reg = TranslatorRegistry()
    for t in (
        LinearTranslator(),
        DetTranslator(),
        EinsumTranslator(),
        ConvPoolTranslator(),
        ConvTransposeTranslator(),
        Col2ImTranslator(),
        DeformConvTranslator(),
        CausalConvWithStateTranslator(),
        RNNTranslator(),
        GRUTranslator(),
        LSTMTranslator(),
        ConvIntegerTranslator(),
        QLinearConvTranslator(),
        MaxUnpoolTranslator(),
        GridSampleTranslator(),
        AffineGridTranslator(),
        NormTranslator(),
        ElementwiseTranslator(),
        SwiGLUTranslator(),
        QuantTranslator(),
        DataTranslator(),
        PointwiseTranslator(),
        BitCastTranslator(),
        ReduceTranslator(),
        DFTTranslator(),
        NegativeLogLikelihoodLossTranslator(),
        SoftmaxCrossEntropyLossTranslator(),
        RotaryEmbeddingTranslator(),
        AttentionTranslator(),
        LinearAttentionTranslator(),
        IndexTranslator(),
    ):
        reg.register(t)
    return reg
