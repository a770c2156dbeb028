"""Impact through calls on receivers of unknown type and through docs naming a symbol in code.

A one-layer fixture: ``ctx`` and ``cmd`` parameters carry no annotation, a test calls a method
on an untyped argument, a reStructuredText page names ``Context.invoke`` in a code span and
calls ``ctx.close()`` in a code sample.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mapper.impact import MapView, Mode, impact_of
from mapper.impact.records import Affected, Category, ImpactReport
from tests.mapper.toy_map import build_view

FILES = {
    "stackmap.toml": (
        '[stackmap]\nname = "lx"\ndocs = ["docs"]\ntests = ["tests/**"]\n\n'
        '[[layers]]\nid = "lib"\nname = "Library"\npaths = ["lib/**"]\n'
        'description = "The library."\n'
    ),
    "lib/__init__.py": "",
    "lib/core.py": (
        "class Context:\n"
        "    def invoke(self, fn):\n"
        "        return fn()\n\n"
        "    def close(self):\n"
        "        return None\n\n\n"
        "class BaseCommand:\n"
        "    def invoke(self, ctx):\n"
        "        return 1\n\n\n"
        "class Command(BaseCommand):\n"
        "    def invoke(self, ctx):\n"
        "        return 2\n\n"
        "    def parse_args(self, ctx, args):\n"
        "        return args\n\n\n"
        "class Runner:\n"
        "    def invoke(self, cli):\n"
        "        return cli\n"
    ),
    "lib/use.py": (
        "def run_with(ctx, cmd):\n"
        "    ctx.invoke(print)\n"
        "    return cmd.parse_args(ctx, [])\n\n\n"
        "def other(thing):\n"
        "    return thing.invoke(1)\n"
    ),
    "tests/test_use.py": (
        "def test_context_invokes(ctx):\n    assert ctx.invoke(lambda: 3) == 3\n\n\n"
        "def helper(ctx):\n    return ctx.invoke(print)\n"
    ),
    "docs/guide.rst": (
        "Guide\n=====\n\nCall ``Context.invoke`` to run a function.\n\n"
        ".. code-block:: python\n\n    ctx.close()\n\nThe end.\n"
    ),
}


@pytest.fixture(scope="module")
def view(tmp_path_factory: pytest.TempPathFactory) -> tuple[MapView, Path]:
    root = tmp_path_factory.mktemp("loose")
    return build_view(root, FILES), root


def _items(report: ImpactReport) -> dict[str, Affected]:
    assert all(item.why for item in report.affected)  # every item explains itself
    return {item.node: item for item in report.affected}


def test_a_receiver_named_like_the_class_is_a_precise_caller(
    view: tuple[MapView, Path],
) -> None:
    v, root = view
    report = impact_of(v, root, "symbol:lib.core.Context.invoke", mode=Mode.PRECISE)
    assert list(report.by_layer()) == ["lib"]
    items = _items(report)
    caller = items["symbol:lib.use.run_with"]
    assert caller.category is Category.CALLER
    hop = caller.why[-1]
    assert (hop.source, hop.target, hop.path, hop.line, hop.confidence) == (
        "symbol:lib.use.run_with",
        "symbol:lib.core.Context.invoke",
        "lib/use.py",
        2,
        0.5,
    )
    assert hop.detail == "loose call: receiver `ctx` of unknown type; named like Context"
    test = items["test:tests/test_use.py::test_context_invokes"]
    assert test.category is Category.TEST
    assert test.why[-1].line == 2
    helper = items["file:tests/test_use.py"]  # a test helper: the test file, not a caller
    assert (helper.category, helper.why[-1].line) == (Category.TEST, 6)
    assert "symbol:lib.use.other" not in items  # `thing` names no class: name alone
    docs = [i for i in items.values() if i.category is Category.DOC]
    assert [(d.path, d.why[-1].evidence.value, d.why[-1].line) for d in docs] == [
        ("docs/guide.rst", "doc_mention", 4)
    ]


def test_a_method_only_one_hierarchy_defines_matches_any_receiver(
    view: tuple[MapView, Path],
) -> None:
    v, root = view
    items = _items(impact_of(v, root, "symbol:lib.core.Command.parse_args", mode=Mode.PRECISE))
    hop = items["symbol:lib.use.run_with"].why[-1]
    assert (hop.line, hop.confidence) == (3, 0.6)
    assert hop.detail == (
        "loose call: receiver `cmd` of unknown type; "
        "every class defining parse_args is in Command's hierarchy"
    )


def test_the_method_name_alone_and_code_samples_are_conservative(
    view: tuple[MapView, Path],
) -> None:
    v, root = view
    precise = _items(impact_of(v, root, "symbol:lib.core.Context.invoke", mode=Mode.PRECISE))
    wide = _items(impact_of(v, root, "symbol:lib.core.Context.invoke", mode=Mode.CONSERVATIVE))
    hop = wide["symbol:lib.use.other"].why[-1]
    assert (hop.line, hop.confidence) == (7, 0.3)
    assert hop.detail.endswith("matched by the method name invoke alone")
    assert set(precise) < set(wide)
    close_precise = _items(impact_of(v, root, "symbol:lib.core.Context.close"))
    assert [i.path for i in close_precise.values() if i.category is Category.DOC] == []
    close = _items(impact_of(v, root, "symbol:lib.core.Context.close", mode=Mode.CONSERVATIVE))
    docs = [i for i in close.values() if i.category is Category.DOC]
    assert [(d.path, d.why[-1].line) for d in docs] == [("docs/guide.rst", 8)]
