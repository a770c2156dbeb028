"""A new op with an input carrying a shape joins the lists of ops whose inputs carry shapes
(:mod:`mapper.scenarios.shapeinputs`, from the ONNX schemas)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mapper.scenarios import shapeinputs
from mapper.scenarios.newop import walk_new_op
from tests.mapper.scenarios.pool_toy import FILES
from tests.mapper.toy_map import build_view, up_down_config

pytest.importorskip("onnx", reason="shape inputs are read from the ONNX schemas")


@pytest.mark.parametrize(
    ("op", "inputs"),
    [
        ("Col2Im", ("image_shape", "block_shape")),
        ("Reshape", ("shape",)),
        ("AffineGrid", ("size",)),
        ("RoiAlign", ()),  # batch_indices: data indices
        ("ReverseSequence", ()),  # sequence_lens: data lengths
        ("BitShift", ()),  # integers alone: data, not shapes
        ("Conv", ()),
    ],
)
def test_an_integer_input_beside_other_data_carries_a_shape(
    op: str, inputs: tuple[str, ...]
) -> None:
    assert shapeinputs.shape_inputs()[op] == inputs


@pytest.mark.parametrize(
    ("names", "listed"),
    [
        ({"Reshape", "Squeeze", "Tile", "TopK"}, True),
        ({"Reshape", "Squeeze", "Tile", "TopK", "Relu", "Conv", "MaxPool", "Softmax"}, True),
        ({"Reshape", "Squeeze", "Tile", "Relu", "Conv", "MaxPool", "Softmax"}, False),  # 3 of 7
        ({"ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin"}, False),  # one family's axes
        ({"Reshape", "Squeeze"}, False),
    ],
)
def test_a_list_of_ops_with_shape_inputs(names: set[str], listed: bool) -> None:
    assert shapeinputs.lists_them(names) is listed


MORE = {
    "toy/up/bind.py": (  # a table of the inputs bound as constants
        'CONSTANT_INPUTS = {("Reshape", 1), ("Tile", 1), ("TopK", 1), ("Squeeze", 1)}\n'
        'ACTIVATIONS = ("Relu", "Sigmoid", "Tanh", "Reshape", "Tile")\n'
    ),
    "docs/up/bind.md": (
        "---\ntitle: Binding\nlayer: up\n---\n\n# Constant inputs\n\n"
        "Reshape shape, Tile repeats, TopK k and Squeeze axes are bound as constants.\n\n"
        "# Activations\n\nRelu, Sigmoid and Tanh run in place; Reshape is a view.\n"
    ),
}


def test_the_new_op_enters_the_tables_and_pages_of_shape_inputs(tmp_path: Path) -> None:
    """AffineGrid (size) like MaxPool (no shape input): CONSTANT_INPUTS and the page's first
    section list shape inputs; ACTIVATIONS and the second section name one or two."""
    view = build_view(tmp_path, {**FILES, **MORE}, up_down_config("shapes"))
    walk = walk_new_op(view, "AffineGrid", like="maxpool")
    got = sorted(
        (p.kind.value, p.path, p.predicted)
        for p in walk.points
        if p.path in ("toy/up/bind.py", "docs/up/bind.md")
    )
    assert got == [
        ("doc", "docs/up/bind.md", "doc:docs/up/bind.md#constant-inputs"),
        ("use", "toy/up/bind.py", "toy.up.bind.CONSTANT_INPUTS"),
    ]


def test_a_similar_op_with_a_shape_input_of_its_own_leaves_the_tables_to_find(
    tmp_path: Path,
) -> None:
    """CenterCropPad (shape) like Pad (pads): the table holds Pad's entry among ONNX operators
    the stack has no op of, so it is no list of the stack's ops the similar op's footprint
    holds; it gains CenterCropPad's entry all the same, and so does the page."""
    table = 'CONSTANT_INPUTS = {("Reshape", 1), ("Tile", 1), ("Pad", 1), ("Squeeze", 1)}\n'
    files = {**FILES, **MORE, "toy/up/bind.py": table}
    view = build_view(tmp_path, files, up_down_config("shapes"))
    walk = walk_new_op(view, "CenterCropPad", like="pad")
    got = sorted(
        (p.kind.value, p.path, p.line, p.predicted)
        for p in walk.points
        if p.path in ("toy/up/bind.py", "docs/up/bind.md")
    )
    assert got == [
        ("doc", "docs/up/bind.md", 6, "doc:docs/up/bind.md#constant-inputs"),
        ("use", "toy/up/bind.py", 1, "toy.up.bind.CONSTANT_INPUTS"),
    ]
