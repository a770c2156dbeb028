"""Names reached indirectly: through a package that re-exports them, through their module
(``mod.Enum.MEMBER``), and through a local alias (``k = Kind`` … ``k.MUL``)."""

from __future__ import annotations

import textwrap

import pytest

from mapper.ingest import ingest
from mapper.query import EdgeKind, Map, open_map

FILES = {
    "pkg/__init__.py": "from pkg.inner import Kind, Scaler, scale, traced\n",
    "pkg/inner/__init__.py": "from .kinds import Kind\nfrom .maths import Scaler, scale, traced\n",
    "pkg/inner/kinds.py": """
        import enum


        class Kind(enum.Enum):
            ADD = 1
            MUL = 2
            SUB = 3
    """,
    "pkg/inner/maths.py": """
        def scale(x):
            return 2 * x


        class Scaler:
            def apply(self, x):
                return scale(x)


        def traced(fn):
            return fn
    """,
    "tests/test_use.py": """
        import pkg


        def test_a_decorator_applied_inside_a_test():
            @pkg.traced
            def inner():
                return 1

            assert inner() == 1
    """,
    "app/__init__.py": "",
    "app/use.py": """
        from pkg import Kind, Scaler, scale
        from pkg.inner import kinds

        FIRST = Kind.ADD


        def twice(x):
            return scale(x) + scale(x)


        def by_module():
            return kinds.Kind.SUB


        def by_alias():
            k = Kind
            return [k.MUL, k.SUB]


        def through_param(s: "Scaler | None", n):
            return s.apply(n) + n.apply(s)
    """,
}


@pytest.fixture(scope="module")
def m(tmp_path_factory: pytest.TempPathFactory) -> Map:
    root = tmp_path_factory.mktemp("through")
    (root / "stackmap.toml").write_text(
        '[stackmap]\nname = "t"\ntests = ["tests/**"]\n'
        '[[layers]]\nid = "app"\nname = "A"\npaths = ["app/**"]\n'
        'description = "a"\n[[layers]]\nid = "pkg"\nname = "P"\npaths = ["pkg/**"]\n'
        'description = "p"\n',
        encoding="utf-8",
    )
    for path, text in FILES.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    ingest(root, embed=False, progress=False)
    return open_map(root)


def _from_app(m: Map, kind: EdgeKind) -> set[tuple[str, str, str]]:
    return {
        (e.source, e.target, e.evidence[0].cite())
        for e in m.edges(kind)
        if e.source.startswith(("symbol:app.", "file:app/"))
    }


def test_references_through_re_exports_modules_and_aliases(m: Map) -> None:
    assert _from_app(m, EdgeKind.REFERENCES) == {
        ("file:app/use.py", "symbol:pkg.inner.kinds.Kind.ADD", "app/use.py:4 (code_reference)"),
        (
            "symbol:app.use.by_module",
            "symbol:pkg.inner.kinds.Kind.SUB",
            "app/use.py:12 (code_reference)",
        ),
        (
            "symbol:app.use.by_module",
            "symbol:pkg.inner.kinds.Kind",
            "app/use.py:12 (code_reference)",
        ),
        (
            "symbol:app.use.by_alias",
            "symbol:pkg.inner.kinds.Kind",
            "app/use.py:16 (code_reference)",
        ),
        (
            "symbol:app.use.by_alias",
            "symbol:pkg.inner.kinds.Kind.MUL",
            "app/use.py:17 (code_reference)",
        ),
        (
            "symbol:app.use.by_alias",
            "symbol:pkg.inner.kinds.Kind.SUB",
            "app/use.py:17 (code_reference)",
        ),
    }


def test_calls_through_two_packages_and_an_annotated_parameter(m: Map) -> None:
    assert _from_app(m, EdgeKind.CALLS) == {
        ("symbol:app.use.twice", "symbol:pkg.inner.maths.scale", "app/use.py:8 (code_reference)"),
        (
            "symbol:app.use.through_param",
            "symbol:pkg.inner.maths.Scaler.apply",
            "app/use.py:21 (code_reference)",
        ),
    }
    (by_param,) = [e for e in m.edges(EdgeKind.CALLS) if e.source == "symbol:app.use.through_param"]
    assert by_param.evidence[0].confidence == 0.9  # the annotation, not the call, names the class


def test_a_test_covers_the_decorators_it_applies(m: Map) -> None:
    covers = {(e.source, e.target) for e in m.edges(EdgeKind.COVERS)}
    assert covers == {
        (
            "test:tests/test_use.py::test_a_decorator_applied_inside_a_test",
            "symbol:pkg.inner.maths.traced",
        ),
        (
            "test:tests/test_use.py::test_a_decorator_applied_inside_a_test",
            "component:pkg.inner",
        ),
    }
