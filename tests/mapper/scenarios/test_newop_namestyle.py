"""A new module's file name spells the new op as its place spells the similar op: joined where
the similar op's module, or the layer a test folder covers, spells it joined (``maxpool``,
``MAXPOOL``), split where it spells it split (``max_pool``, ``gather_nd``), split for an op of
one word (``pad``), which says nothing of how words go."""

from __future__ import annotations

import pytest

from mapper.impact import MapView
from mapper.scenarios import namestyle, opfamily, vocab
from mapper.scenarios.newop import walk_new_op
from tests.mapper.toy_map import build_view, kernel_ids, op_types, rules_module, up_down_config

_OPS = ("MAXPOOL", "GATHER_ND", "PAD", "RELU")
FILES = {
    "toy/__init__.py": "",
    "toy/up/__init__.py": "",
    "toy/up/ir.py": op_types(_OPS),
    "toy/up/rules.py": rules_module(
        more="""
        @register(OpType.MAXPOOL)
        def max_pool(node):
            return max_pool_shape(node)


        def max_pool_shape(node):
            return node


        @register(OpType.GATHER_ND)
        def gather_nd(node):
            return node


        @register(OpType.PAD)
        def pad(node):
            return node
        """
    ),
    "toy/down/__init__.py": "",
    "toy/down/kernels.py": kernel_ids(_OPS),
    "toy/down/maxpool.py": """
        from toy.down.kernels import KernelId


        def maxpool(x):
            return x


        TABLE = {KernelId.MAXPOOL: maxpool}
    """,
    "tests/__init__.py": "",
    "tests/down/test_conformance_gather_nd.py": """
        from toy.down.maxpool import maxpool


        def test_gather_nd_matches():
            assert maxpool(1) == 1
    """,
    "tests/down/test_conformance_pad.py": """
        from toy.down.maxpool import maxpool


        def test_pad_matches():
            assert maxpool(2) == 2
    """,
    "tests/up/test_gather_nd.py": """
        from toy.up.rules import gather_nd


        def test_gather_nd_rule():
            assert gather_nd(1) == 1
    """,
    "tests/up/test_pad.py": """
        from toy.up.rules import pad


        def test_pad_rule():
            assert pad(1) == 1
    """,
}
CONFIG = up_down_config("namestyle", 'tests = ["tests/**"]\n')


@pytest.fixture(scope="module")
def view(tmp_path_factory: pytest.TempPathFactory) -> MapView:
    return build_view(tmp_path_factory.mktemp("namestyle"), FILES, CONFIG, dedent=True)


def _new_files(view: MapView, name: str, like: str) -> set[tuple[str, str | None]]:
    walk = walk_new_op(view, name, like=like)
    return {
        (p.kind.value, p.path)
        for p in walk.points
        if p.path
        and p.kind.value in ("test", "implementation")
        and view.node(f"file:{p.path}") is None
    }


def test_the_layers_spell_the_similar_op_their_own_way(view: MapView) -> None:
    """up: OpType.MAXPOOL joined, max_pool and max_pool_shape split; down: KernelId.MAXPOOL and
    maxpool joined. The tests of tests/down cover down, those of tests/up cover up."""
    known = opfamily.ops(view)
    spelt = vocab.spellings(known["maxpool"])
    style = namestyle.Spelling(view, known["maxpool"], spelt)
    assert (style.joined_by("up"), style.joined_by("down"), style.informative) == (
        False,
        True,
        True,
    )
    assert [namestyle.covered_layer(view, f) for f in ("tests/down", "tests/up")] == ["down", "up"]
    pad = namestyle.Spelling(view, known["pad"], vocab.spellings(known["pad"]))
    assert (pad.informative, pad.joined_in("test_conformance_pad")) == (False, None)


def test_new_modules_spell_the_new_op_as_their_place_spells_the_similar_op(
    view: MapView,
) -> None:
    assert _new_files(view, "MaxUnpool", "maxpool") == {
        ("implementation", "toy/down/maxunpool.py"),
        ("test", "tests/down/test_conformance_maxunpool.py"),
        ("test", "tests/up/test_max_unpool.py"),
    }


def test_split_and_one_word_spellings_give_snake_case(view: MapView) -> None:
    """gather_nd's own modules spell it split; pad is one word: both give snake case."""
    assert _new_files(view, "ScatterND", "gathernd") == {
        ("test", "tests/down/test_conformance_scatter_nd.py"),
        ("test", "tests/up/test_scatter_nd.py"),
    }
    assert _new_files(view, "PadReflect", "pad") == {
        ("test", "tests/down/test_conformance_pad_reflect.py"),
        ("test", "tests/up/test_pad_reflect.py"),
    }


def test_where_the_similar_op_is_one_word_onnx_reference_spells_the_new_files(
    view: MapView,
) -> None:
    """pad says nothing of how words go: BitCast's new files are spelt as ONNX's reference
    implementation names its module (``op_bitcast.py``), where the word splitter gives
    bit_cast; an op ONNX does not know keeps its words apart (PadReflect above)."""
    assert vocab.snake("BitCast") == "bit_cast"
    assert vocab.module_stem("BitCast") == "bitcast"
    assert vocab.module_stem("QLinearMatMul") == "qlinear_matmul"
    assert vocab.module_stem("MyOwnOp") == "my_own_op"
    assert _new_files(view, "BitCast", "pad") == {
        ("test", "tests/down/test_conformance_bitcast.py"),
        ("test", "tests/up/test_bitcast.py"),
    }
