"""Renaming the similar op's spellings after the new op: case, separators and capitals kept."""

from __future__ import annotations

import pytest

from mapper.scenarios.vocab import new_forms, op_words, rename, snake, words


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
        ("dsv4_hc_comb", "dsv4_hc_comb"),  # the user's underscores are the word breaks
    ],
)
def test_snake_case_glues_numbers_and_lone_letters_to_their_words(name: str, snaked: str) -> None:
    assert snake(name) == snaked


@pytest.mark.parametrize(
    ("name", "split"),
    [
        ("dsv4_hc_comb", ["dsv4", "hc", "comb"]),
        ("DSV4_HC_COMB", ["dsv4", "hc", "comb"]),
        ("lightning_indexer", ["lightning", "indexer"]),
        ("Col2Im", ["col", "2", "im"]),
        ("gelu", ["gelu"]),
    ],
)
def test_a_new_ops_words_are_split_where_its_user_put_underscores(
    name: str, split: list[str]
) -> None:
    assert op_words(name) == split


def test_a_number_inside_a_written_word_stays_in_it_when_renaming() -> None:
    forms = new_forms({"gateddeltanet"}, "dsv4hccomb")
    new = op_words("dsv4_hc_comb")
    assert rename("GGML_OP_GATED_DELTA_NET", forms, new) == "GGML_OP_DSV4_HC_COMB"
    assert rename("ggml_compute_forward_gated_delta_net", forms, new) == (
        "ggml_compute_forward_dsv4_hc_comb"
    )
    # by its words alone the number glues both neighbours, as Col2Im's does
    assert rename("GGML_OP_GATED_DELTA_NET", forms, words("dsv4_hc_comb")) == (
        "GGML_OP_DSV4HC_COMB"
    )
