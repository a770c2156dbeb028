"""Code and tests naming the new op in a string before it exists change when it lands
(:mod:`mapper.scenarios.early`); a tool's tests, which name ops as their test data, are no
tests of the new op."""

from __future__ import annotations

from pathlib import Path

from mapper.scenarios import early
from mapper.scenarios.newop import walk_new_op
from tests.mapper.scenarios.pool_toy import FILES
from tests.mapper.toy_map import build_view, up_down_config

MORE = {
    "toy/up/refuse.py": (  # an op list in a layer: a string naming the op
        'MISSING = ("LpPool", "Det")\n\n\ndef refuse(op: str) -> bool:\n'
        "    # LpPool is not here yet: a comment is no string\n"
        "    return op in MISSING\n"
    ),
    "tests/up/test_refuse.py": (  # covers toy.up: its example of a missing op changes
        "from toy.up.refuse import refuse\n\n\ndef test_a_missing_op_is_refused():\n"
        '    assert refuse("Det")\n    assert not refuse("MaxPool")\n\n\n'
        "def test_the_missing_list():\n"
        '    assert refuse("LpPool")  # the example\n'
    ),
    "tool/names.py": "def lower(name: str) -> str:\n    return name.lower()\n",
    "tests/tool/test_names.py": (  # covers a tool beside the layers: its test data
        "from tool.names import lower\n\n\ndef test_names():\n"
        '    assert lower("LpPool") == "lppool"\n'
    ),
    "toy/down/docs.py": '"""Pools: MaxPool, AvgPool; no LpPooling nor lppool."""\n',
}


def test_strings_naming_the_op_in_layers_and_their_tests_are_change_points(
    tmp_path: Path,
) -> None:
    view = build_view(tmp_path, {**FILES, **MORE}, up_down_config("early"))
    points = early.mentions(view, "LpPool")
    got = sorted((p.kind.value, p.layer or "", p.path, p.line, p.predicted) for p in points)
    assert got == [
        ("use", "", "tests/up/test_refuse.py", 10, ""),  # the first line naming it
        ("use", "up", "toy/up/refuse.py", 1, ""),
    ]
    walk = walk_new_op(view, "LpPool", like="maxpool")
    assert {("tests/up/test_refuse.py", 10), ("toy/up/refuse.py", 1)} <= {
        (p.path, p.line) for p in walk.points if p.kind.value == "use"
    }


TESTS = {
    "tests/down/test_pool.py": (  # the similar op's own test
        "from toy.down.pool import maxpool\n\n\ndef test_maxpool():\n"
        "    assert maxpool([1.0, 3.0, 2.0], 2) == [3.0, 3.0]\n"
    ),
    "tests/tool/test_questions.py": (  # a tool's test named after the op: the tool's question
        "from tool.names import lower\n\n\ndef test_the_maxpool_question():\n"
        '    assert lower("MaxPool") == "maxpool"\n'
    ),
}


def test_a_tools_test_named_after_the_similar_op_is_no_test_of_the_new_op(
    tmp_path: Path,
) -> None:
    view = build_view(tmp_path, {**FILES, **MORE, **TESTS}, up_down_config("early"))
    walk = walk_new_op(view, "LpPool", like="maxpool")
    tests = sorted((p.path, p.predicted) for p in walk.points if p.kind.value == "test")
    assert tests == [("tests/down/test_pool.py", "tests.down.test_pool.test_lppool")]
