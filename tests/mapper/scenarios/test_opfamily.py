"""Op vocabularies and op spellings derived from the map: a toy whose upper layer spells an
op ``CONV`` and the lower one ``CONV2D`` (a table maps one onto the other), beside data-type
and fault-kind vocabularies that are spelt alike in both layers but name no op."""

from __future__ import annotations

import pytest

from mapper.impact import MapView
from mapper.scenarios import opfamily
from mapper.scenarios.newop import walk_new_op
from tests.mapper.toy_map import build_view, rules_module, up_down_config

FILES = {
    "toy/__init__.py": "",
    "toy/up/__init__.py": "",
    "toy/up/ir.py": """
        import enum


        class OpType(enum.Enum):
            CONV = "Conv"
            ADD = "Add"
            MUL = "Mul"
            RELU = "Relu"


        class DType(enum.Enum):
            F16 = 1
            F32 = 2
            I8 = 3
            I32 = 4


        class Fault(enum.Enum):
            ECC = 1
            HANG = 2
            RESET = 3
            LOST = 4
    """,
    "toy/up/rules.py": rules_module(
        "CONV",
        "ADD",
        more="""
            def arity(op):
                return {OpType.CONV: 2, OpType.ADD: 2, OpType.MUL: 2, OpType.RELU: 1}[op]


            def conv_out(size, k):
                return size - k + 1
        """,
    ),
    "toy/up/lower.py": """
        from toy.down.kernels import KernelId
        from toy.up.ir import OpType

        LOWER = {
            OpType.CONV: KernelId.CONV2D,
            OpType.ADD: KernelId.ADD,
            OpType.MUL: KernelId.MUL,
            OpType.RELU: KernelId.RELU,
        }
    """,
    "toy/down/__init__.py": "",
    "toy/down/kernels.py": """
        import enum


        class KernelId(enum.IntEnum):
            CONV2D = 1
            ADD = 2
            MUL = 3
            RELU = 4


        class DType(enum.IntEnum):
            F16 = 1
            F32 = 2
            I8 = 3
            I32 = 4


        class Fault(enum.IntEnum):
            ECC = 1
            HANG = 2
            RESET = 3
            LOST = 4


        def conv2d(x, w):
            return x


        def relu(x):
            return x
    """,
}
CONFIG = up_down_config("fam")


@pytest.fixture(scope="module")
def view(tmp_path_factory: pytest.TempPathFactory) -> MapView:
    return build_view(tmp_path_factory.mktemp("family"), FILES, CONFIG, dedent=True)


def test_only_op_vocabularies_name_ops(view: MapView) -> None:
    assert sorted(opfamily.op_vocabularies(view)) == [
        "symbol:toy.down.kernels.KernelId",
        "symbol:toy.up.ir.OpType",
    ]
    known = opfamily.ops(view)
    assert sorted(known) == ["add", "conv", "mul", "relu"]  # a tie: the shorter spelling
    assert [v.node.id for v in known["conv"]] == [
        "symbol:toy.down.kernels.KernelId.CONV2D",
        "symbol:toy.up.ir.OpType.CONV",
    ]
    assert opfamily.find(known, "Conv2D") == "conv"
    assert opfamily.find(known, "ecc") is None


def test_new_op_like_a_differently_spelt_op_reaches_both_layers(view: MapView) -> None:
    walk = walk_new_op(view, "ConvTranspose", like="conv2d")
    assert walk.like == "conv"
    assert {(p.kind.value, p.layer, p.path, p.line, p.predicted) for p in walk.points} == {
        ("vocabulary", "up", "toy/up/ir.py", 5, "toy.up.ir.OpType.CONVTRANSPOSE"),
        ("vocabulary", "down", "toy/down/kernels.py", 5, "toy.down.kernels.KernelId.CONVTRANSPOSE"),
        ("registration", "up", "toy/up/rules.py", 13, ""),
        ("implementation", "up", "toy/up/rules.py", 14, "toy.up.rules.convtranspose_rule"),
        ("use", "up", "toy/up/rules.py", 24, "toy.up.rules.arity"),
        ("use", "up", "toy/up/lower.py", 5, "toy.up.lower.LOWER"),
        ("implementation", "up", "toy/up/rules.py", 27, "toy.up.rules.convtranspose_out"),
        ("implementation", "down", "toy/down/kernels.py", 25, "toy.down.kernels.convtranspose"),
    }
    for point in walk.points:
        assert point.why and point.why[0].path == point.path, point
