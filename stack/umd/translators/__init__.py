"""Op translators, one per op family (stage 3 semantic parse and stage 4 shape inference)."""

from __future__ import annotations

from stack.umd.registry import TranslatorRegistry
from stack.umd.translators.conv_pool import ConvPoolTranslator
from stack.umd.translators.data import DataTranslator
from stack.umd.translators.elementwise import ElementwiseTranslator
from stack.umd.translators.linear import LinearTranslator
from stack.umd.translators.norm import NormTranslator
from stack.umd.translators.quant import QuantTranslator

__all__ = [
    "ConvPoolTranslator",
    "DataTranslator",
    "ElementwiseTranslator",
    "LinearTranslator",
    "NormTranslator",
    "QuantTranslator",
    "default_translators",
]


def default_translators() -> TranslatorRegistry:
    """A registry with every built-in translator registered."""
    reg = TranslatorRegistry()
    for t in (
        LinearTranslator(),
        ConvPoolTranslator(),
        NormTranslator(),
        ElementwiseTranslator(),
        QuantTranslator(),
        DataTranslator(),
    ):
        reg.register(t)
    return reg
