"""A new op's own test module gets the tests its folder's per-op modules share by name, the op
spelt as the new module spells it; a test modelled on the similar op's in a family module of
that folder is left out."""

from __future__ import annotations

import pytest

from mapper.impact import MapView
from mapper.scenarios import conventions, opfamily, testnames
from mapper.scenarios.newop import walk_new_op
from tests.mapper.toy_map import build_view, kernel_ids, op_types, rules_module, up_down_config

_OPS = ("GATHER", "PAD", "SOFTMAX", "TRANSPOSE")
_ONNX = ("Gather", "Pad", "Softmax", "Transpose")
_DOWN = "tests/down/test_conformance_{}.py"
FILES = {
    "toy/__init__.py": "",
    "toy/up/__init__.py": "",
    "toy/up/ir.py": op_types(_OPS, _ONNX),
    "toy/up/rules.py": rules_module("GATHER", "TRANSPOSE"),
    "toy/down/__init__.py": "",
    "toy/down/kernels.py": kernel_ids(_OPS),
    _DOWN.format("gather"): "from toy.up.rules import gather_rule\n\n\n"
    "def test_gather_matches_the_loop():\n    assert gather_rule(1) == 1\n\n\n"
    "def test_gather_refuses_a_bad_axis():\n    assert True\n\n\n"
    "def test_an_index_out_of_range_is_a_fault():\n    assert True\n",
    _DOWN.format("pad"): "def test_pad_matches_the_loop():\n    assert True\n\n\n"
    "def test_an_index_out_of_range_is_a_fault():\n    assert True\n",
    _DOWN.format("softmax"): "def test_softmax_matches_the_loop():\n    assert True\n\n\n"
    "def test_softmax_sums_to_one():\n    assert True\n",
    _DOWN.format("misc"): "from toy.up.rules import transpose_rule\n\n\n"
    "def test_transpose():\n    assert transpose_rule(1) == 1\n",
}
CONFIG = up_down_config("testnames", 'tests = ["tests/**"]\n')


@pytest.fixture(scope="module")
def view(tmp_path_factory: pytest.TempPathFactory) -> MapView:
    return build_view(tmp_path_factory.mktemp("testnames"), FILES, CONFIG)


def test_a_template_naming_the_op_in_most_modules_is_the_folders(view: MapView) -> None:
    """test_{}_matches_the_loop is in 3 of the 3 per-op modules; test_{}_refuses_a_bad_axis
    in 1; test_an_index_out_of_range_is_a_fault in 2 but names no op (misc is no op)."""
    found = conventions._conventions(view, opfamily.ops(view))
    modules = found[("tests/down", "test_conformance_{}.py")]
    templates = testnames.templates(view, "test_conformance_{}.py", modules)
    assert {t: [n.id for n in ns] for t, ns in templates.items()} == {
        "test_{}_matches_the_loop": [
            f"test:{_DOWN.format(op)}::test_{op}_matches_the_loop"
            for op in ("gather", "pad", "softmax")
        ]
    }


def test_the_new_module_gets_the_templated_tests_and_not_the_family_modules(
    view: MapView,
) -> None:
    """ScatterElements like Transpose (tested in test_conformance_misc.py, no module of its
    own): the new module test_conformance_scatter_elements.py with its templated test; no
    test_scatter_elements in misc."""
    walk = walk_new_op(view, "ScatterElements", like="transpose")
    tests = sorted((p.path, p.predicted) for p in walk.points if p.kind.value == "test")
    new, module = _DOWN.format("scatter_elements"), "tests.down.test_conformance_scatter_elements"
    assert tests == [(new, ""), (new, f"{module}.test_scatter_elements_matches_the_loop")]
