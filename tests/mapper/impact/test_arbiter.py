"""The resolved truth's judge: Jedi's verdict on each changed use of a changed method.

Two trees of a small package stand for a commit's parent and the commit: ``Session.submit``
gains a parameter; ``Runner`` has a ``submit`` of its own. Each file and page below changes a
line using the word ``submit`` in another way, and the verdicts are exact.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mapper.impact.arbiter import Arbiter, Verdict, hunks
from mapper.impact.arbiter_pages import samples, span_verdict

PKG = {
    "pkg/__init__.py": "",
    "pkg/session.py": (
        "class Session:\n"
        "    def submit(self, blob, wait=False):\n"
        "        return blob\n\n\n"
        "class Pinned(Session):\n"
        "    pass\n"
    ),
    "pkg/runner.py": "class Runner:\n    def submit(self, job):\n        return job\n",
}
QUALNAME = "pkg.session.Session.submit"
HIERARCHY = frozenset({"pkg.session.Session", "pkg.session.Pinned"})


def _tree(root: Path, files: dict[str, str]) -> Path:
    for path, text in {**PKG, **files}.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(text, encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def arbiter(tmp_path_factory: pytest.TempPathFactory) -> Arbiter:
    base = tmp_path_factory.mktemp("arbiter")
    users = {
        "app/typed.py": (
            "from pkg.session import Pinned\n\n"
            "def go():\n"
            "    s = Pinned()\n"
            "    return s.submit(b'x', wait=True)\n"
        ),
        "app/other.py": (
            "from pkg.runner import Runner\n\n"
            "def go():\n"
            "    r = Runner()\n"
            "    # s.submit(b'x') was here\n"
            "    return r.submit('job')\n"
        ),
        "app/untyped.py": "def go(s):\n    return s.submit(b'x', wait=True)\n",
        "app/bare.py": "def go(submit):\n    return submit(b'x')\n",
        "docs/run.rst": (
            "Running\n=======\n\n"
            "Queue work with :meth:`Session.submit`::\n\n"
            "    from pkg.runner import Runner\n"
            "    Runner().submit('job')\n\n"
            "Never submit (twice) in prose.\n"
            "See ``Runner.submit`` too. The import is left out::\n\n"
            "    pkg.session.Session().submit(b'x', wait=True)\n"
        ),
    }
    return Arbiter(_tree(base / "parent", users), _tree(base / "commit", users))


@pytest.mark.parametrize(
    ("path", "added", "verdict"),
    [
        ("app/typed.py", [(5, "    return s.submit(b'x', wait=True)")], (1, 1, 0, 0, False)),
        (
            "app/other.py",
            [(5, "    # s.submit(b'x') was here"), (6, "    return r.submit('job')")],
            (1, 0, 1, 0, True),
        ),
        ("app/untyped.py", [(2, "    return s.submit(b'x', wait=True)")], (1, 0, 0, 1, False)),
        ("app/bare.py", [(2, "    return submit(b'x')")], (1, 0, 1, 0, True)),
        ("docs/run.rst", [(4, "Queue work with :meth:`Session.submit`::")], (1, 1, 0, 0, False)),
        ("docs/run.rst", [(7, "    Runner().submit('job')")], (1, 0, 1, 0, True)),
        (
            "docs/run.rst",
            [(9, "Never submit (twice) in prose."), (10, "See ``Runner.submit`` too. The")],
            (1, 0, 1, 0, True),
        ),
        ("docs/run.rst", [(9, "Never submit (twice) in prose.")], (0, 0, 0, 0, True)),
        (
            "docs/run.rst",
            [(12, "    pkg.session.Session().submit(b'x', wait=True)")],
            (1, 1, 0, 0, False),
        ),
    ],
)
def test_each_use_is_judged(
    arbiter: Arbiter,
    path: str,
    added: list[tuple[int, str]],
    verdict: tuple[int, int, int, int, bool],
) -> None:
    got: Verdict = arbiter.judge(path, QUALNAME, HIERARCHY, added, [])
    assert (
        got.calls,
        len(got.matched),
        len(got.other),
        got.unknown,
        got.elsewhere,
    ) == verdict, got


def test_names_jedi_gives() -> None:
    """The definitions named are Jedi's full names (a call through a subclass instance goes to
    the base's method); a code span is named by its verdict."""
    assert span_verdict("See ``Runner.submit`` too.", 6, "submit", QUALNAME) == "other"
    assert span_verdict(":meth:`~pkg.Session.submit`", 7, "submit", QUALNAME) == "matched"
    assert span_verdict("``@s.submit()``", 3, "submit", QUALNAME) == "unknown"
    assert span_verdict("no span submit", 8, "submit", QUALNAME) is None


def test_typed_and_other_calls_are_named(arbiter: Arbiter) -> None:
    typed = arbiter.judge(
        "app/typed.py", QUALNAME, HIERARCHY, [(5, "    return s.submit(b'x', wait=True)")], []
    )
    assert typed.matched == ("pkg.session.Session.submit",)
    other = arbiter.judge(
        "app/other.py", QUALNAME, HIERARCHY, [(6, "    return r.submit('job')")], []
    )
    assert other.other == ("pkg.runner.Runner.submit",)


def test_samples_of_both_page_kinds() -> None:
    rst = "Title\n=====\n\nText::\n\n    a = 1\n    b(a)\n\nAfter.\n"
    assert [(s.first, s.indent, s.code) for s in samples(rst, "p.rst")] == [
        (5, 4, "\na = 1\nb(a)\n")
    ]
    md = "# T\n\n```python\nx = 1\n```\n\n```sh\nls\n```\n"
    assert [(s.first, s.code) for s in samples(md, "p.md")] == [(4, "x = 1\n")]


def test_hunks_number_added_and_removed_lines() -> None:
    diff = (
        "diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n"
        "@@ -3,2 +3 @@ def f():\n-    a = 1\n-    b = 2\n+    c = 3\n"
        "@@ -10 +9,2 @@\n-x\n+y\n+z\n"
    )
    assert hunks(diff) == {
        "m.py": (
            [(3, "    c = 3"), (9, "y"), (10, "z")],
            [(3, "    a = 1"), (4, "    b = 2"), (10, "x")],
        )
    }
