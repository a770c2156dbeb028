"""Impact through calls on instances whose type the code states, and through subclasses.

A one-layer fixture: ``Engine.start`` is called on locals constructed from ``Engine``,
annotated with it, made by factories whose return annotation names it (imported, or named
through their module), from a nested function, and on a module-level instance in a test.
``Motor.start`` has the same name: calls on a ``Motor`` and on an untyped parameter are not
``Engine.start``'s. A test reaches ``Engine.start`` through a conftest
fixture returning an ``Engine``. ``Child`` inherits ``Base.__init__``, ``Own`` defines its own (an
override, which changes with it).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mapper.impact import MapView, Mode, impact_of
from mapper.impact.records import Affected, Category, ImpactReport
from tests.mapper.toy_map import build_view

FILES = {
    "stackmap.toml": (
        '[stackmap]\nname = "ix"\ndocs = ["docs"]\ntests = ["tests/**"]\n\n'
        '[[layers]]\nid = "lib"\nname = "Library"\npaths = ["lib/**"]\n'
        'description = "The library."\n'
    ),
    "lib/__init__.py": "",
    "lib/core.py": (
        "class Engine:\n"
        "    def start(self, n):\n"
        "        return n\n\n\n"
        "class Motor:\n"
        "    def start(self, n):\n"
        "        return -n\n\n\n"
        'def make_engine() -> "Engine":\n'
        "    return Engine()\n\n\n"
        "class Base:\n"
        "    def __init__(self, size):\n"
        "        self.size = size\n\n\n"
        "class Child(Base):\n"
        "    pass\n\n\n"
        "class Own(Base):\n"
        "    def __init__(self):\n"
        "        super().__init__(1)\n\n\n"
        "def make_motor():\n"
        "    return Motor()\n"
    ),
    "lib/use.py": (
        "from lib import core\n"
        "from lib.core import Child, Engine, Motor, Own, make_engine\n\n\n"
        "def by_construction():\n"
        "    e = Engine()\n"
        "    return e.start(1)\n\n\n"
        "def by_annotation(x):\n"
        "    e: Engine = x\n"
        "    return e.start(2)\n\n\n"
        "def by_factory():\n"
        "    e = make_engine()\n"
        "    return e.start(3)\n\n\n"
        "def by_module_factory():\n"
        "    e = core.make_engine()\n"
        "    return e.start(4)\n\n\n"
        "def nested():\n"
        "    e = Engine()\n\n"
        "    def inner():\n"
        "        return e.start(5)\n\n"
        "    return inner\n\n\n"
        "def other_class():\n"
        "    e = Motor()\n"
        "    return e.start(6)\n\n\n"
        "def untyped(e):\n"
        "    return e.start(7)\n\n\n"
        "def build_child():\n"
        "    return Child(3)\n\n\n"
        "def build_own():\n"
        "    return Own()\n\n\n"
        "def by_plain_factory():\n"
        "    m = core.make_motor()\n"
        "    return m.start(8)\n"
    ),
    "tests/conftest.py": (
        "import pytest\n\n"
        "from lib.core import Engine\n\n\n"
        "@pytest.fixture\n"
        "def started():\n"
        "    return Engine()\n"
    ),
    "tests/test_fixture.py": (
        "def test_through_a_fixture(started):\n    assert started.start(3) == 3\n"
    ),
    "tests/test_use.py": (
        "from lib.core import Engine\n\n"
        "engine = Engine()\n\n\n"
        "def test_start():\n"
        "    assert engine.start(1) == 1\n\n\n"
        "def test_local_engine():\n"
        "    e = Engine()\n"
        "    assert e.start(2) == 2\n"
    ),
}


@pytest.fixture(scope="module")
def view(tmp_path_factory: pytest.TempPathFactory) -> tuple[MapView, Path]:
    root = tmp_path_factory.mktemp("instances")
    return build_view(root, FILES), root


def _items(report: ImpactReport) -> dict[str, Affected]:
    assert all(item.why for item in report.affected)  # every item explains itself
    return {item.node: item for item in report.affected}


def test_calls_on_typed_locals_are_precise_callers(view: tuple[MapView, Path]) -> None:
    v, root = view
    items = _items(impact_of(v, root, "symbol:lib.core.Engine.start", mode=Mode.PRECISE))
    callers = {k: i for k, i in items.items() if i.category is Category.CALLER}
    assert sorted(callers) == [
        "symbol:lib.use.by_annotation",
        "symbol:lib.use.by_construction",
        "symbol:lib.use.by_factory",
        "symbol:lib.use.by_module_factory",
        "symbol:lib.use.nested.inner",
    ]
    lines = {"by_construction": 7, "by_annotation": 12, "by_factory": 17}
    lines |= {"by_module_factory": 22, "nested.inner": 29}
    for name, line in lines.items():
        (hop,) = callers[f"symbol:lib.use.{name}"].why
        assert (hop.source, hop.target, hop.edge, hop.forward) == (
            f"symbol:lib.use.{name}",
            "symbol:lib.core.Engine.start",
            "calls",
            False,
        )
        assert (hop.evidence.value, hop.path, hop.line, hop.confidence) == (
            "code_reference",
            "lib/use.py",
            line,
            0.9,
        )
    fixture = items["test:tests/test_fixture.py::test_through_a_fixture"]
    assert fixture.category is Category.TEST  # `started` is the conftest fixture: an Engine
    assert [(h.edge, h.path, h.line, h.confidence) for h in fixture.why] == [
        ("covers", "tests/test_fixture.py", 2, 0.9)
    ]
    test = items["test:tests/test_use.py::test_start"]
    assert test.category is Category.TEST
    assert [(h.edge, h.path, h.line) for h in test.why] == [("covers", "tests/test_use.py", 7)]


def test_a_test_calling_the_change_is_a_call_site_though_it_also_covers_the_component(
    view: tuple[MapView, Path],
) -> None:
    """``test_local_engine`` constructs an ``Engine`` (covering its component, certainty 1)
    and calls ``start`` on it (0.9): it is a test to edit, and its file is ranked."""
    v, root = view
    report = impact_of(v, root, "symbol:lib.core.Engine.start", mode=Mode.PRECISE)
    test = _items(report)["test:tests/test_use.py::test_local_engine"]
    assert test.category is Category.TEST
    assert [(h.edge, h.path, h.line, h.confidence) for h in test.why] == [
        ("covers", "tests/test_use.py", 12, 0.9)
    ]
    assert "tests/test_use.py" in {f.path for f in report.files}


def test_the_same_method_name_on_another_class_is_not_a_caller(
    view: tuple[MapView, Path],
) -> None:
    v, root = view
    items = _items(impact_of(v, root, "symbol:lib.core.Motor.start", mode=Mode.PRECISE))
    assert sorted(k for k, i in items.items() if i.category is Category.CALLER) == [
        "symbol:lib.use.by_plain_factory",  # m = core.make_motor(): make_motor returns Motor()
        "symbol:lib.use.other_class",
    ]
    (hop,) = items["symbol:lib.use.by_plain_factory"].why
    assert (hop.edge, hop.path, hop.line, hop.confidence) == ("calls", "lib/use.py", 53, 0.9)


def test_constructing_a_subclass_without_its_own_init_calls_the_base_init(
    view: tuple[MapView, Path],
) -> None:
    v, root = view
    items = _items(impact_of(v, root, "symbol:lib.core.Base.__init__", mode=Mode.PRECISE))
    callers = {k: i for k, i in items.items() if i.category is Category.CALLER}
    assert sorted(callers) == [
        "symbol:lib.core.Own.__init__",  # super().__init__(1)
        "symbol:lib.use.build_child",  # Child(3): Child has no __init__ of its own
        "symbol:lib.use.build_own",  # Own(): Own.__init__ overrides the changed one
    ]
    via = callers["symbol:lib.use.build_child"].why
    assert [(h.source, h.target, h.edge, h.forward, h.path, h.line) for h in via] == [
        (
            "symbol:lib.core.Base",
            "symbol:lib.core.Base.__init__",
            "contains",
            False,
            "lib/core.py",
            16,
        ),
        ("symbol:lib.core.Child", "symbol:lib.core.Base", "inherits", False, "lib/core.py", 20),
        ("symbol:lib.use.build_child", "symbol:lib.core.Child", "calls", False, "lib/use.py", 44),
    ]
    (hop,) = callers["symbol:lib.core.Own.__init__"].why
    assert (hop.edge, hop.path, hop.line) == ("calls", "lib/core.py", 26)
