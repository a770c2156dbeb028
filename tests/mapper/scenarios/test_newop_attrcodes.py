"""A new op's string attributes get the enum the kernel layer codes them with and the table
the layer above decodes their names with, named as the map's existing ones are."""

from __future__ import annotations

import pytest

from mapper.impact import MapView
from mapper.scenarios.newop import walk_new_op
from mapper.scenarios.records import PointKind
from tests.mapper.toy_map import build_view, kernel_ids, op_types, rules_module, up_down_config

_OPS = ("PAD", "SCATTER_ND", "GATHER", "CONCAT", "SOFTMAX", "TRANSPOSE")
_ONNX = ("Pad", "ScatterND", "Gather", "Concat", "Softmax", "Transpose")
FILES = {
    "toy/__init__.py": "",
    "toy/up/__init__.py": "",
    "toy/up/ir.py": op_types(_OPS, _ONNX),
    "toy/up/rules.py": rules_module("PAD", "SCATTER_ND", "GATHER"),
    "toy/up/translate.py": """
        from toy.down.index import PadMode, ScatterReduction
        from toy.down.kernels import KernelId
        from toy.up.ir import OpType

        PAD_MODES = {"constant": PadMode.CONSTANT, "reflect": PadMode.REFLECT}
        REDUCTIONS = {"none": ScatterReduction.NONE, "add": ScatterReduction.ADD}
        _KERNEL = {
            OpType.PAD: KernelId.PAD,
            OpType.SCATTER_ND: KernelId.SCATTER_ND,
            OpType.GATHER: KernelId.GATHER,
        }
    """,
    "toy/down/__init__.py": "",
    "toy/down/kernels.py": kernel_ids(_OPS),
    "toy/down/index.py": """
        import enum

        from toy.down.kernels import KernelId


        class PadMode(enum.IntEnum):
            CONSTANT = 0
            REFLECT = 1


        class ScatterReduction(enum.IntEnum):
            NONE = 0
            ADD = 1


        def pad(x):
            return x


        def scatter_nd(x):
            return x


        TABLE = {KernelId.PAD: pad, KernelId.SCATTER_ND: scatter_nd}
    """,
}
CONFIG = up_down_config("attrcodes", up="IR and translators.", down="Kernels.")


@pytest.fixture(scope="module")
def view(tmp_path_factory: pytest.TempPathFactory) -> MapView:
    return build_view(tmp_path_factory.mktemp("attrcodes"), FILES, CONFIG, dedent=True)


def _coded(view: MapView, op: str, like: str) -> set[tuple[str | None, str]]:
    walk = walk_new_op(view, op, like=like)
    return {
        (p.path, p.predicted)
        for p in walk.points
        if p.kind is PointKind.IMPLEMENTATION and p.like.endswith(("Mode", "Reduction"))
    }


def test_each_string_attribute_gets_an_enum_beside_the_kernel_and_a_decoding_table(
    view: MapView,
) -> None:
    """PadMode and ScatterReduction code Pad's mode and ScatterND's reduction; translate.py
    decodes them. GridSample's mode and padding_mode (align_corners is an int) get theirs."""
    assert _coded(view, "GridSample", "pad") == {
        ("toy/down/index.py", "toy.down.index.GridSampleMode"),
        ("toy/down/index.py", "toy.down.index.GridSamplePaddingMode"),
        ("toy/up/translate.py", "toy.up.translate.GRID_SAMPLE_MODES"),
        ("toy/up/translate.py", "toy.up.translate.GRID_SAMPLE_PADDING_MODES"),
    }


def test_an_enum_named_after_the_start_of_the_new_ops_name_codes_it_already(
    view: MapView,
) -> None:
    """ScatterReduction (Scatter…) codes ScatterElements' reduction too: nothing new."""
    assert _coded(view, "ScatterElements", "scatternd") == set()


def test_a_string_attribute_holding_free_text_gets_no_enum(view: MapView) -> None:
    """Einsum's equation has no default: free text, not a choice among named values, so
    neither an enum nor a decoding table; Gelu's approximate (``none`` unless set) gets both."""
    assert _coded(view, "Einsum", "pad") == set()
    assert _coded(view, "Gelu", "pad") == {
        ("toy/down/index.py", "toy.down.index.GeluApproximate"),
        ("toy/up/translate.py", "toy.up.translate.GELU_APPROXIMATES"),
    }
