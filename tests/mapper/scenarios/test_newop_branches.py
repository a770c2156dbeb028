"""New-op places inside the family the new op joins: the per-op branches of the module mapping
the family's values, and the new op's tests in its own module where a folder's convention
gives each op one."""

from __future__ import annotations

import pytest

from mapper.impact import MapView
from mapper.scenarios.newop import walk_new_op
from tests.mapper.toy_map import build_view, kernel_ids, op_types, rules_module, up_down_config

_OPS = ("GATHER", "SCATTER_ND", "PAD", "SOFTMAX", "TRANSPOSE", "CONCAT")
_ONNX = ("Gather", "ScatterND", "Pad", "Softmax", "Transpose", "Concat")
FILES = {
    "toy/__init__.py": "",
    "toy/up/__init__.py": "",
    "toy/up/ir.py": op_types(_OPS, _ONNX),
    "toy/up/rules.py": rules_module("GATHER", "SCATTER_ND"),
    "toy/down/__init__.py": "",
    "toy/down/kernels.py": kernel_ids(_OPS),
    "toy/down/translate.py": """
        from toy.down.kernels import KernelId
        from toy.up.ir import OpType

        _KERNEL = {
            OpType.GATHER: KernelId.GATHER,
            OpType.SCATTER_ND: KernelId.SCATTER_ND,
        }


        class IndexTranslator:
            ops = frozenset(_KERNEL)

            def parse(self, op, attrs):
                if op is OpType.SCATTER_ND:
                    return attrs.get("reduction")
                return None

            def infer(self, kernel, shape):
                if kernel is KernelId.SCATTER_ND:
                    return shape
                return shape[:1]

            def describe(self):
                return "index family"


        def scatter_nd_kernel():
            return KernelId.SCATTER_ND
    """,
    "toy/down/fuse.py": """
        from toy.up.ir import OpType


        def fold_pad(op):
            return op is OpType.PAD or op is OpType.SCATTER_ND
    """,
    "tests/down/test_conformance_gather.py": "def test_gather_matches():\n    assert True\n",
    "tests/down/test_conformance_pad.py": "def test_pad_matches():\n    assert True\n",
    "tests/down/test_conformance_scatter_nd.py": (
        "def test_scatter_nd_matches():\n    assert True\n"
    ),
    "tests/up/test_scatter_nd_folding.py": "def test_scatter_nd_folds():\n    assert True\n",
}
CONFIG = up_down_config(
    "branches", 'tests = ["tests/**"]\n', up="IR.", down="Kernels and translators."
)


@pytest.fixture(scope="module")
def view(tmp_path_factory: pytest.TempPathFactory) -> MapView:
    return build_view(tmp_path_factory.mktemp("branches"), FILES, CONFIG, dedent=True)


def test_the_family_modules_branches_on_the_similar_op_gain_the_new_ops(view: MapView) -> None:
    """translate.py maps SCATTER_ND's OpType onto its KernelId: parse and infer branch on it
    and gain a branch; describe names no op; fold_pad names SCATTER_ND outside the family
    module (behaviour peculiar to a few ops); scatter_nd_kernel, spelt after the similar op, is
    no branch of the family."""
    walk = walk_new_op(view, "ScatterElements", like="scatternd")
    uses = sorted((p.path, p.line, p.predicted) for p in walk.points if p.kind.value == "use")
    assert uses == [
        ("toy/down/translate.py", 6, "toy.down.translate._KERNEL"),
        ("toy/down/translate.py", 14, "toy.down.translate.IndexTranslator.parse"),
        ("toy/down/translate.py", 19, "toy.down.translate.IndexTranslator.infer"),
    ]


def test_the_new_ops_tests_go_to_its_own_module_by_the_folders_convention(
    view: MapView,
) -> None:
    """tests/down gives gather, pad and scatter_nd a test_conformance_<op>.py each: the test
    modelled on scatter_nd's goes into test_conformance_scatter_elements.py, which is written
    too. tests/up has one op's module only (no convention): its test stays where it is."""
    walk = walk_new_op(view, "ScatterElements", like="scatternd")
    tests = sorted(
        ((p.path, p.line, p.predicted) for p in walk.points if p.kind.value == "test"),
        key=lambda t: (t[0], t[1] or 0, t[2]),
    )
    assert tests == [
        (
            "tests/down/test_conformance_scatter_elements.py",
            None,
            "tests.down.test_conformance_scatter_elements.test_scatter_elements_matches",
        ),
        ("tests/down/test_conformance_scatter_elements.py", 1, ""),
        (
            "tests/up/test_scatter_nd_folding.py",
            1,
            "tests.up.test_scatter_nd_folding.test_scatter_elements_folds",
        ),
    ]
