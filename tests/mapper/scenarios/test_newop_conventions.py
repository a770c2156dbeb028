"""New-op places read from the stack's conventions: a folder's one-test-module-per-op pattern,
a table of every op missing the similar op, and contract entries for the new op's attributes
(from the ONNX schemas)."""

from __future__ import annotations

import pytest

from mapper.impact import MapView
from mapper.scenarios import conventions, opfamily
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
    "tests/down/test_conformance_gather.py": "def test_gather_matches():\n    assert True\n",
    "tests/down/test_conformance_pad.py": "def test_pad_matches():\n    assert True\n",
    "tests/down/test_conformance_families.py": "def test_families():\n    assert True\n",
    "tests/up/test_softmax.py": "def test_softmax_sums_to_one():\n    assert True\n",
    "tests/up/test_cases.py": """
        from toy.up.ir import OpType

        CASES = [OpType.GATHER, OpType.PAD, OpType.SOFTMAX, OpType.TRANSPOSE]
        SOME = [OpType.GATHER, OpType.PAD, OpType.SOFTMAX]
    """,
    "contracts/up_down.yaml": """
        contract: up_down
        schema: 1
        version: 1.0.0
        upper: up
        lower: down
        description: >
          Kernel requests cross from up to down.
        interfaces:
          - id: up_down.request
            kind: class
            symbol: toy.up.ir.OpType
            sync: sync
            synchronization: none
            memory: none
            errors: none
            description: Attributes per op - SOFTMAX axis; TRANSPOSE perm; CONCAT axis; GATHER axis.
          - id: up_down.reductions
            kind: enum
            symbol: toy.down.kernels.KernelId
            sync: sync
            synchronization: none
            memory: none
            errors: none
            description: The SCATTER_ND kernel's reduction - none, add, mul.
          - id: up_down.pad_mode
            kind: enum
            symbol: toy.down.kernels.KernelId
            sync: sync
            synchronization: none
            memory: none
            errors: none
            description: The PAD kernel's mode - constant, reflect.
          - id: up_down.plan
            kind: function
            symbol: toy.up.rules.register
            sync: sync
            synchronization: none
            memory: none
            errors: none
            description: Registers a rule for an op.
    """,
}
CONFIG = up_down_config("conventions", 'contracts = "contracts"\ntests = ["tests/**"]\n')


@pytest.fixture(scope="module")
def view(tmp_path_factory: pytest.TempPathFactory) -> MapView:
    pytest.importorskip("onnx", reason="the attribute rules read the ONNX schemas")
    return build_view(tmp_path_factory.mktemp("conventions"), FILES, CONFIG, dedent=True)


def test_a_folder_giving_two_ops_a_module_each_gets_one_for_the_new_op(view: MapView) -> None:
    """tests/down has test_conformance_<op>.py for gather and pad (and one about families);
    tests/up has one op's module only, no convention. Both modules have a test_{}_matches:
    the new one gets test_scatter_elements_matches (:mod:`mapper.scenarios.testnames`)."""
    points = conventions.test_modules(view, opfamily.ops(view), "ScatterElements")
    assert [(p.kind.value, p.path, p.like) for p in points] == [
        (
            "test",
            "tests/down/test_conformance_scatter_elements.py",
            "file:tests/down/test_conformance_gather.py",
        ),
        (
            "test",
            "tests/down/test_conformance_scatter_elements.py",
            "test:tests/down/test_conformance_gather.py::test_gather_matches",
        ),
    ]


def test_a_table_of_most_ops_gains_the_new_op_without_the_similar_one(view: MapView) -> None:
    """CASES names 4 of the 6 ops (two thirds), not SCATTER_ND; SOME names 3, a third with
    the similar op missing: not a table of every op."""
    walk = walk_new_op(view, "ScatterElements", like="scatternd")
    uses = {(p.path, p.line, p.predicted) for p in walk.points if p.kind.value == "use"}
    assert uses == {("tests/up/test_cases.py", 3, "tests.up.test_cases.CASES")}


def test_contracts_gain_the_attributes_the_new_op_shares_or_adds(view: MapView) -> None:
    """ScatterElements (axis, reduction) like ScatterND (reduction): the interface naming
    SCATTER_ND's reduction names it too, and the per-op attribute list gains its axis. No new
    string attribute: no new value-set interface."""
    known = opfamily.ops(view)
    points = conventions.attribute_contracts(view, known, "scatternd", "ScatterElements")
    assert [(p.path, p.line, p.predicted) for p in points] == [
        ("contracts/up_down.yaml", 9, "interface:up_down.request"),
        ("contracts/up_down.yaml", 17, "interface:up_down.reductions"),
    ]


def test_a_new_string_attribute_gets_a_value_set_beside_the_others(view: MapView) -> None:
    """Like Gather (axis), ScatterElements adds reduction, a string: the contract describing
    PAD's mode and SCATTER_ND's reduction gains an interface; the list gains an entry; Gather's
    shared axis names it in the list too (one point per interface)."""
    known = opfamily.ops(view)
    points = conventions.attribute_contracts(view, known, "gather", "ScatterElements")
    assert sorted((p.path, p.line, p.predicted, p.action[:10]) for p in points) == [
        ("contracts/up_down.yaml", 9, "interface:up_down.request", "name Scatt"),
        ("contracts/up_down.yaml", 25, "", "add an int"),
    ]
    assert conventions.attribute_contracts(view, known, "gather", "NotAnOnnxOp") == []


_PLAIN = ("RELU", "SOFTMAX", "TRANSPOSE", "CONCAT", "GATHER")
PLAIN_FILES = {
    **{k: v for k, v in FILES.items() if k.startswith("toy/") and "ir.py" not in k},
    "toy/up/ir.py": op_types(_PLAIN),
    "toy/up/rules.py": rules_module("RELU", "SOFTMAX"),
    "toy/down/kernels.py": kernel_ids(_PLAIN),
    "contracts/up_down.yaml": FILES["contracts/up_down.yaml"],
}


def test_a_similar_op_without_attributes_leaves_every_attribute_fresh(
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    """Relu is an ONNX operator without attributes: LeakyRelu's alpha is fresh to it, so the
    interface listing attributes per op (SOFTMAX axis; TRANSPOSE perm; CONCAT axis; GATHER
    axis) gains LeakyRelu's entry; no other interface names RELU."""
    pytest.importorskip("onnx", reason="the attribute rules read the ONNX schemas")
    plain = build_view(tmp_path_factory.mktemp("plain"), PLAIN_FILES, CONFIG, dedent=True)
    points = conventions.attribute_contracts(plain, opfamily.ops(plain), "relu", "LeakyRelu")
    assert [(p.path, p.line, p.predicted, p.action[:14]) for p in points] == [
        ("contracts/up_down.yaml", 9, "interface:up_down.request", "name LeakyRelu")
    ]
