"""New-op places the map's names alone do not show: string vocabularies (a table of every op
spelt as strings, a test's list of a folder's families), protoc's generated companions of a
proto value, and the enclosing definition each extended place is scored by."""

from __future__ import annotations

import difflib

import pytest

from mapper.impact import MapView
from mapper.scenarios import opfamily, similar, vocab
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
            TRANSPOSE = "Transpose"
    """,
    "toy/up/rules.py": rules_module("CONV", "ADD"),
    "toy/up/lower.py": """
        from toy.down.kernels import KernelId
        from toy.up.ir import OpType

        LOWER = {
            OpType.CONV: KernelId.CONV2D,
            OpType.ADD: KernelId.ADD,
            OpType.MUL: KernelId.MUL,
            OpType.RELU: KernelId.RELU,
            OpType.TRANSPOSE: KernelId.TRANSPOSE,
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
            TRANSPOSE = 5
    """,
    "toy/down/table.py": """
        from typing import NamedTuple


        class Row(NamedTuple):
            value: int
            name: str


        ROWS = (
            Row(1, "CONV2D"),
            Row(2, "ADD"),
            Row(3, "MUL"),
            Row(4, "RELU"),
            Row(5, "TRANSPOSE"),
        )
        FUSED = ("CONV2D", "RELU")
    """,
    "toy/down/pointwise.py": """
        from toy.down.kernels import KernelId


        def relu(x):
            return x


        def add(x, y):
            return x


        TABLE = {KernelId.RELU: relu, KernelId.ADD: add}
    """,
    "toy/up/families.py": """
        from toy.down.kernels import KernelId
        from toy.up.ir import OpType

        POINTWISE = {OpType.RELU: KernelId.RELU}


        def fuse(ops):
            return ops
    """,
    "tests/test_pointwise.py": """
        from toy.down.pointwise import relu
        from toy.up.families import fuse


        def test_relu_kernel():
            assert relu(1) == 1


        def test_relu_fuses():
            assert fuse([1]) == [1]
    """,
    "toy/down/fam/__init__.py": """
        from toy.down.fam import add, conv_pool, mul, relu

        FAMILIES = (add, conv_pool, mul, relu)
    """,
    "toy/down/fam/conv_pool.py": """
        from toy.down.kernels import KernelId


        class ConvPoolFamily:
            ops = (KernelId.CONV2D,)
    """,
    "toy/down/fam/add.py": "X = 1\n",
    "toy/down/fam/mul.py": "X = 2\n",
    "toy/down/fam/relu.py": "X = 3\n",
    "toy/down/service/__init__.py": "",
    "toy/down/service/toy_pb2.pyi": """
        class OpType(int):
            OP_CONV2D: OpType
            OP_ADD: OpType
            OP_MUL: OpType
            OP_RELU: OpType
        OP_CONV2D: OpType
        OP_ADD: OpType
    """,
    "toy/down/service/toy_pb2.py": "DESCRIPTOR = None\n",
    "contracts/toy.proto": """
        syntax = "proto3";
        package toy.v1;

        enum OpType {
          OP_CONV2D = 0;
          OP_ADD = 1;
          OP_MUL = 2;
          OP_RELU = 3;
        }
    """,
    "tests/test_fam.py": """
        def test_every_family_is_there():
            assert {"conv_pool", "add", "mul"} == {"add", "mul", "conv_pool"}
    """,
}
CONFIG = up_down_config(
    "strs", 'contracts = "contracts"\ntests = ["tests/**"]\nignore = ["**/*_pb2.py"]\n'
)


@pytest.fixture(scope="module")
def view(tmp_path_factory: pytest.TempPathFactory) -> MapView:
    return build_view(tmp_path_factory.mktemp("strings"), FILES, CONFIG, dedent=True)


def test_string_vocabularies_generated_companions_and_enclosing_definitions(
    view: MapView,
) -> None:
    walk = walk_new_op(view, "ConvTranspose", like="conv")
    got = {(p.kind.value, p.path, p.line, p.predicted) for p in walk.points}
    assert got == {
        ("vocabulary", "toy/up/ir.py", 5, "toy.up.ir.OpType.CONVTRANSPOSE"),
        ("vocabulary", "toy/down/kernels.py", 5, "toy.down.kernels.KernelId.CONVTRANSPOSE"),
        ("vocabulary", "contracts/toy.proto", 5, "toy.v1.OpType.OP_CONVTRANSPOSE"),
        ("registration", "toy/up/rules.py", 13, ""),  # a decorator: its function is new
        ("implementation", "toy/up/rules.py", 14, "toy.up.rules.convtranspose_rule"),
        ("use", "toy/up/lower.py", 5, "toy.up.lower.LOWER"),  # the table, not the file
        # every op as strings; FUSED names two ops, behaviour peculiar to them
        ("use", "toy/down/table.py", 10, "toy.down.table.ROWS"),
        # a module of its own for the new op, the folder's import list, its tuple of modules
        # and its test's list of families
        (
            "implementation",
            "toy/down/fam/conv_transpose.py",
            1,
            "toy.down.fam.conv_transpose.ConvTransposeFamily",
        ),
        ("registration", "toy/down/fam/__init__.py", 1, ""),
        ("use", "toy/down/fam/__init__.py", 3, "toy.down.fam.FAMILIES"),  # modules by name
        ("use", "tests/test_fam.py", 2, "tests.test_fam.test_every_family_is_there"),
        # protoc's stub repeats the value in its enum and at module level; the module is
        # regenerated beside it
        (
            "generated",
            "toy/down/service/toy_pb2.pyi",
            2,
            "toy.down.service.toy_pb2.OpType.OP_CONVTRANSPOSE",
        ),
        (
            "generated",
            "toy/down/service/toy_pb2.pyi",
            6,
            "toy.down.service.toy_pb2.OP_CONVTRANSPOSE",
        ),
        ("generated", "toy/down/service/toy_pb2.py", 1, ""),
    }
    mirrors = {"toy/down/fam/conv_transpose.py": "toy/down/fam/conv_pool.py"}
    for point in walk.points:  # a new module is cited where the module it mirrors is
        assert point.why and point.why[0].path == mirrors.get(point.path, point.path), point


def test_the_similar_op_is_chosen_by_shape_as_well_as_spelling(view: MapView) -> None:
    """By spelling alone ConvTranspose is most like Transpose; the ONNX schemas say it has
    Conv's inputs, output and six of its attributes, and nothing of Transpose's."""
    known = opfamily.ops(view)
    assert similar.shape("convtranspose", "conv") == 10 / 12
    assert similar.shape("convtranspose", "transpose") == 0.0
    assert similar.shape("convtranspose", "conv2d") is None  # no ONNX operator of that name
    spelling = {
        op: max(similar.spelling("convtranspose", s) for s in vocab.spellings(vs))
        for op, vs in known.items()
    }
    assert max(spelling, key=spelling.__getitem__) == "transpose"
    ranked = similar.similar_ops("ConvTranspose", known)
    assert ranked[:2] == [
        ("conv2d", (spelling["conv2d"] + 10 / 12) / 2),
        ("transpose", spelling["transpose"] / 2),
    ]
    assert walk_new_op(view, "ConvTranspose").like == "conv2d"


def _ratio(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a, b).ratio()


def test_spelling_weighs_the_words_an_op_shares_as_well_as_its_characters() -> None:
    """CenterCropPad shares more characters with Expand than with Pad, and the word Pad with
    Pad only."""
    assert _ratio("centercroppad", "expand") > _ratio("centercroppad", "pad")
    assert similar.spelling("centercroppad", "pad") == (_ratio("centercroppad", "pad") + 1 / 3) / 2
    assert similar.spelling("centercroppad", "expand") == _ratio("centercroppad", "expand") / 2
    # a name ONNX does not know is one word
    assert similar.spelling("conv2d", "conv2d") == 1.0
    assert similar.spelling("conv2d", "conv") == _ratio("conv2d", "conv") / 2


def test_a_quantised_input_is_a_feature_of_its_own() -> None:
    """QLinearConv's x, w and zero points are quantised as ConvInteger's are: of its 21
    features (9 inputs, 5 of them quantised, an output, 6 attributes) it shares 15 with
    ConvInteger and 10 with Conv (whose inputs are float)."""
    assert similar.shape("qlinearconv", "convinteger") == 15 / 21
    assert similar.shape("qlinearconv", "conv") == 10 / 21


def test_family_tables_mapping_rows_and_tests_of_the_op_own_code(view: MapView) -> None:
    """Relu lives in a module about a few ops (not named after it): a table there maps its
    value onto its kernel, so the new op's kernel and row go beside them; a one-entry map
    between two op vocabularies gains the new op's entry; of the tests spelt after relu, the
    one covering its kernel is mirrored and the one covering a shared pass is not."""
    walk = walk_new_op(view, "Gelu", like="relu")
    got = {(p.kind.value, p.path, p.line, p.predicted) for p in walk.points}
    assert got == {
        ("vocabulary", "contracts/toy.proto", 8, "toy.v1.OpType.OP_GELU"),
        ("vocabulary", "toy/down/kernels.py", 8, "toy.down.kernels.KernelId.GELU"),
        ("vocabulary", "toy/up/ir.py", 8, "toy.up.ir.OpType.GELU"),
        ("generated", "toy/down/service/toy_pb2.py", 1, ""),
        ("generated", "toy/down/service/toy_pb2.pyi", 5, "toy.down.service.toy_pb2.OpType.OP_GELU"),
        ("implementation", "toy/down/pointwise.py", 4, "toy.down.pointwise.gelu"),
        ("registration", "toy/down/pointwise.py", 12, "toy.down.pointwise.TABLE"),
        ("use", "toy/up/families.py", 4, "toy.up.families.POINTWISE"),
        ("use", "toy/up/lower.py", 8, "toy.up.lower.LOWER"),
        ("use", "toy/down/table.py", 13, "toy.down.table.ROWS"),
        ("test", "tests/test_pointwise.py", 5, "tests.test_pointwise.test_gelu_kernel"),
    }
