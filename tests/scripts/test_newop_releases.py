"""``scripts/newop_releases.py``: which ops each release of a history added to an op enum."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from tests.scripts.test_newop_history import _git

REPO = Path(__file__).resolve().parents[2]

HEADER = """enum ggml_op {
    GGML_OP_NONE = 0,

    GGML_OP_ADD,
%s    GGML_OP_MUL, // a comment
    GGML_OP_COUNT,
};

// GGML_OP_ADD named in a comment, and GGML_OP_FAKE in code, are no values
int x = GGML_OP_FAKE;
"""


def _script() -> ModuleType:
    sys.path.insert(0, str(REPO / "scripts"))  # it imports newop_history beside it
    try:
        spec = importlib.util.spec_from_file_location(
            "newop_releases", REPO / "scripts/newop_releases.py"
        )
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(REPO / "scripts"))
    return module


def _release(root: Path, added: str, subject: str) -> str:
    (root / "include").mkdir(exist_ok=True)
    (root / "include" / "ggml.h").write_text(HEADER % added, encoding="utf-8")
    _git(root, "add", ".")
    _git(root, "commit", "-q", "-m", subject)
    return _git(root, "rev-parse", "HEAD")


def test_each_value_a_release_adds_is_an_op_modelled_on_the_one_before(tmp_path: Path) -> None:
    _git(tmp_path, "init", "-q", "-b", "main")
    script = _script()
    _release(tmp_path, "", "ggml 1")
    second = _release(tmp_path, "    GGML_OP_SUB,\n    GGML_OP_DIV = 7,\n", "ggml 2")
    third = _release(tmp_path, "    GGML_OP_SUB,\n    GGML_OP_DIV = 7,\n    GGML_OP_X,\n", "ggml 3")
    assert script.values(tmp_path, second, "include/ggml.h", "GGML_OP_") == [
        "GGML_OP_NONE",
        "GGML_OP_ADD",
        "GGML_OP_SUB",
        "GGML_OP_DIV",
        "GGML_OP_MUL",
        "GGML_OP_COUNT",
    ]
    assert script.added_ops(tmp_path, "include/ggml.h", "GGML_OP_") == [
        ("sub", second, "add", "ggml 2"),
        ("div", second, "add", "ggml 2"),
        ("x", third, "div", "ggml 3"),
    ]
    assert script.values(tmp_path, second, "include/none.h", "GGML_OP_") == []
