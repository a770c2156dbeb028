"""inherits, overrides, references, registers, module-level and decorator calls, from one parse."""

from __future__ import annotations

import textwrap

import pytest

from mapper.ingest import ingest
from mapper.query import EdgeKind, Map, open_map

REGISTRY = """
    import enum

    TABLE = {}


    class Kind(enum.Enum):
        ADD = 1
        MUL = 2


    def register(*names):
        def deco(fn):
            for name in names:
                TABLE[name] = fn
            return fn
        return deco


    def register_kind(kind, fn):
        TABLE[kind] = fn


    def traced(fn):
        return fn
"""
OPS = """
    from pkg.registry import Kind, TABLE, register, register_kind, traced


    class Base:
        def run(self):
            return 0


    class Add(Base):
        def run(self):
            return Kind.ADD


    @register("add", "plus")
    def add(x: Base) -> int:
        return len(TABLE)


    @traced
    @register("mul")
    def mul(x):
        return Add()


    register_kind(Kind.MUL, mul)
    LIMIT = len(TABLE)
"""


@pytest.fixture(scope="module")
def m(tmp_path_factory: pytest.TempPathFactory) -> Map:
    root = tmp_path_factory.mktemp("relations")
    (root / "stackmap.toml").write_text(
        '[stackmap]\nname = "r"\n[[layers]]\nid = "pkg"\nname = "P"\npaths = ["pkg/**"]\n'
        'description = "p"\n',
        encoding="utf-8",
    )
    (root / "pkg").mkdir()
    (root / "pkg" / "__init__.py").write_text("", encoding="utf-8")
    (root / "pkg" / "registry.py").write_text(textwrap.dedent(REGISTRY), encoding="utf-8")
    (root / "pkg" / "ops.py").write_text(textwrap.dedent(OPS), encoding="utf-8")
    ingest(root, embed=False, progress=False)
    return open_map(root)


def _edges(m: Map, kind: EdgeKind) -> set[tuple[str, str, str]]:
    return {
        (e.source, e.target, ", ".join(f"{ev.cite()} {ev.detail}".strip() for ev in e.evidence))
        for e in m.edges(kind)
    }


def test_inherits_and_overrides(m: Map) -> None:
    assert _edges(m, EdgeKind.INHERITS) == {
        ("symbol:pkg.ops.Add", "symbol:pkg.ops.Base", "pkg/ops.py:10 (inheritance)"),
    }
    assert _edges(m, EdgeKind.OVERRIDES) == {
        ("symbol:pkg.ops.Add.run", "symbol:pkg.ops.Base.run", "pkg/ops.py:11 (inheritance)"),
    }


def test_registrations_by_decorator_and_registry_call(m: Map) -> None:
    assert _edges(m, EdgeKind.REGISTERS) == {
        (
            "symbol:pkg.registry.register",
            "symbol:pkg.ops.add",
            "pkg/ops.py:15 (registration) @register",
        ),
        (
            "symbol:pkg.registry.register",
            "symbol:pkg.ops.mul",
            "pkg/ops.py:21 (registration) @register",
        ),
        (
            "symbol:pkg.registry.register_kind",
            "symbol:pkg.registry.Kind.MUL",
            "pkg/ops.py:26 (registration) register_kind(Kind.MUL)",
        ),
        (
            "symbol:pkg.registry.register_kind",
            "symbol:pkg.ops.mul",
            "pkg/ops.py:26 (registration) register_kind(mul)",
        ),
    }


def test_module_level_and_decorator_calls(m: Map) -> None:
    calls = {(s, t) for s, t, _ in _edges(m, EdgeKind.CALLS)}
    assert calls == {
        ("file:pkg/ops.py", "symbol:pkg.registry.register"),  # @register("add", "plus")
        ("file:pkg/ops.py", "symbol:pkg.registry.register_kind"),
        ("symbol:pkg.ops.mul", "symbol:pkg.registry.traced"),  # the decorator call
        ("symbol:pkg.ops.mul", "symbol:pkg.ops.Add"),
        ("component:pkg.ops", "component:pkg.registry"),  # lifted from the code edges
    }
    (traced,) = [e for e in m.edges(EdgeKind.CALLS) if e.target == "symbol:pkg.registry.traced"]
    assert [ev.detail for ev in traced.evidence] == ["@traced"]


def test_references_to_constants_enum_members_and_types(m: Map) -> None:
    refs = {(s, t) for s, t, _ in _edges(m, EdgeKind.REFERENCES)}
    assert refs == {
        ("symbol:pkg.ops.Add.run", "symbol:pkg.registry.Kind.ADD"),
        ("symbol:pkg.ops.add", "symbol:pkg.ops.Base"),  # the annotation
        ("symbol:pkg.ops.add", "symbol:pkg.registry.TABLE"),
        ("file:pkg/ops.py", "symbol:pkg.registry.TABLE"),  # LIMIT = len(TABLE)
        ("file:pkg/ops.py", "symbol:pkg.registry.Kind.MUL"),
        ("symbol:pkg.registry.register.deco", "symbol:pkg.registry.TABLE"),
        ("symbol:pkg.registry.register_kind", "symbol:pkg.registry.TABLE"),
    }
