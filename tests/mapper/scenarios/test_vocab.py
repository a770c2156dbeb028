"""Renaming the similar op's spellings after the new op: case, separators and capitals kept."""

from __future__ import annotations

import pytest

from mapper.scenarios.vocab import new_forms, rename, snake, words


@pytest.mark.parametrize(
    ("spelt", "new", "name", "renamed"),
    [
        ({"gathernd"}, "ScatterND", "GATHER_ND", "SCATTER_ND"),
        (
            {"gathernd"},
            "ScatterND",
            "stack.kmd.kernels.index.gather_nd",
            "stack.kmd.kernels.index.scatter_nd",
        ),
        ({"gathernd"}, "ScatterND", "OP_GATHER_ND", "OP_SCATTER_ND"),
        ({"gathernd"}, "ScatterND", "GatherNDTranslator", "ScatterNDTranslator"),
        ({"gathernd"}, "ScatterND", "gathernd", "scatternd"),
        (
            {"layernorm", "layernormalization"},
            "InstanceNormalization",
            "LAYER_NORM",
            "INSTANCE_NORM",
        ),
        (
            {"layernorm", "layernormalization"},
            "InstanceNormalization",
            "LAYERNORM",
            "INSTANCENORM",
        ),
        (
            {"layernorm", "layernormalization"},
            "InstanceNormalization",
            "LayerNormalization",
            "InstanceNormalization",
        ),
        ({"relu"}, "gelu", "_import_relu", "_import_gelu"),
        ({"relu"}, "gelu", "ReluKernel", "GeluKernel"),
        ({"conv2d", "conv"}, "ConvTranspose", "Conv2d", "ConvTranspose"),
        ({"conv2d", "conv"}, "ConvTranspose", "CONV2D", "CONVTRANSPOSE"),
        ({"gathernd"}, "Col2Im", "GATHER_ND", "COL2IM"),  # a number glues its neighbours
        ({"gathernd"}, "Col2Im", "_gather_nd", "_col2im"),
    ],
)
def test_rename_keeps_the_spelling_form(spelt: set[str], new: str, name: str, renamed: str) -> None:
    forms = new_forms(spelt, "".join(words(new)))
    assert rename(name, forms, words(new)) == renamed


def test_without_the_new_words_the_compact_form_is_used() -> None:
    assert rename("GATHER_ND", new_forms({"gathernd"}, "scatternd")) == "SCATTERND"


@pytest.mark.parametrize(
    ("name", "snaked"),
    [
        ("ConvTranspose", "conv_transpose"),
        ("Col2Im", "col2im"),
        ("Conv2DTranspose", "conv2d_transpose"),
        ("RMSNormalization", "rms_normalization"),
        ("QLinearConv", "qlinear_conv"),
        ("QLinearMatMul", "qlinear_mat_mul"),
        ("__", "__"),
    ],
)
def test_snake_case_glues_numbers_and_lone_letters_to_their_words(name: str, snaked: str) -> None:
    assert snake(name) == snaked
