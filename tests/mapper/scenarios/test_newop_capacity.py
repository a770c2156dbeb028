"""A module with no room for the new op (``module_lines``): its code goes into a module of its
own, imported where the full one is loaded as a module (:mod:`mapper.scenarios.capacity`) and
named where the full one's code is (:mod:`mapper.scenarios.importers`); a page about the module
the op extends is updated (:func:`mapper.scenarios.newop_places.docs`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mapper.config import load_config
from mapper.errors import ConfigError
from mapper.scenarios.newop import walk_new_op
from tests.mapper.scenarios.pool_toy import FILES
from tests.mapper.toy_map import build_view, up_down_config


def _down(tmp_path: Path, settings: str) -> list[tuple[str, str | None, int | None, str]]:
    view = build_view(tmp_path, FILES, up_down_config("capacity", settings))
    walk = walk_new_op(view, "LpPool", like="maxpool")
    plan = next(p for p in walk.layers if p.layer == "down")
    return [(p.kind.value, p.path, p.line, p.predicted) for p in plan.points]


def test_a_module_without_room_sends_the_new_op_to_a_module_of_its_own(tmp_path: Path) -> None:
    """24 lines + maxpool's 7 + its table row pass 30: lppool goes to lp_pool.py (its own
    TABLE, nothing of pool.py extended); backend.py, which lists pool as a module, imports it;
    strided.py, which imports a helper of pool.py, does not."""
    assert _down(tmp_path, "module_lines = 30") == [
        ("implementation", "toy/down/lp_pool.py", 1, "toy.down.lp_pool.lppool"),
        ("registration", "toy/down/backend.py", 1, ""),
        ("use", "toy/down/backend.py", 3, "toy.down.backend.MODULES"),
        ("vocabulary", "toy/down/kernels.py", 5, "toy.down.kernels.KernelId.LPPOOL"),
    ]


@pytest.mark.parametrize("settings", ["module_lines = 32", ""])
def test_a_module_with_room_or_no_limit_gains_the_counterpart_beside_the_similar_ops(
    tmp_path: Path, settings: str
) -> None:
    """24 + 7 + 1 = 32 lines fit a limit of 32; without module_lines nothing moves."""
    assert _down(tmp_path, settings) == [
        ("implementation", "toy/down/pool.py", 11, "toy.down.pool.lppool"),
        ("registration", "toy/down/pool.py", 24, "toy.down.pool.TABLE"),
        ("vocabulary", "toy/down/kernels.py", 5, "toy.down.kernels.KernelId.LPPOOL"),
    ]


@pytest.mark.parametrize("value", ["0", "-3", "true", '"300"', "2.5"])
def test_module_lines_must_be_a_positive_whole_number(tmp_path: Path, value: str) -> None:
    (tmp_path / "stackmap.toml").write_text(
        up_down_config("capacity", f"module_lines = {value}"), encoding="utf-8"
    )
    with pytest.raises(ConfigError, match="module_lines must be a positive whole number") as err:
        load_config(tmp_path)
    assert err.value.line == 3


_LISTS = {
    "toy/down/registry.py": (  # re-exports maxpool and calls it in a factory
        'from toy.down.pool import maxpool\n\n__all__ = [\n    "maxpool",\n]\n\n\n'
        "def kernels():\n    return [maxpool([1.0], 1)]\n"
    ),
    "docs/down/pool.md": (  # about pool.py alone, naming the similar op
        "---\ntitle: Pooling kernels\nlayer: down\n---\n\n# Pooling kernels\n\n"
        "`toy/down/pool.py` holds MaxPool and AvgPool over windows.\n"
    ),
    "docs/down/overview.md": (  # an overview of five modules naming it in passing
        "---\ntitle: Down\nlayer: down\n---\n\n# Down\n\nKernels, MaxPool among them: "
        "`toy/down/pool.py`, `toy/down/index.py`, `toy/down/pad.py`, `toy/down/backend.py`, "
        "`toy/down/strided.py`.\n"
    ),
}


def _points(tmp_path: Path, settings: str) -> list[tuple[str, str | None, int | None, str]]:
    view = build_view(tmp_path, {**FILES, **_LISTS}, up_down_config("capacity", settings))
    walk = walk_new_op(view, "LpPool", like="maxpool")
    return sorted((p.kind.value, p.path, p.line, p.predicted) for p in walk.points)


def test_a_module_importing_the_full_one_lists_the_new_module_where_it_lists_the_old(
    tmp_path: Path,
) -> None:
    """registry.py names maxpool: it imports lp_pool.py, re-exports lppool in __all__ (the
    line quoting maxpool) and calls it in kernels() (the line calling maxpool)."""
    got = [p for p in _points(tmp_path, "module_lines = 30") if p[1] == "toy/down/registry.py"]
    assert got == [
        ("registration", "toy/down/registry.py", 1, ""),
        ("use", "toy/down/registry.py", 4, "toy.down.registry.__all__"),
        ("use", "toy/down/registry.py", 9, "toy.down.registry.kernels"),
    ]


def test_a_page_about_the_module_the_op_extends_is_updated_where_it_names_the_similar_op(
    tmp_path: Path,
) -> None:
    """pool.md is about pool.py alone and names MaxPool; overview.md names it too but is about
    five modules: not predicted."""
    docs = [p for p in _points(tmp_path, "") if p[0] == "doc"]
    assert [(kind, path) for kind, path, _, _ in docs] == [("doc", "docs/down/pool.md")]


def test_a_loader_importing_the_full_module_in_a_function_is_named(tmp_path: Path) -> None:
    """A registry importing pool.py inside its loader function (for what importing it
    registers) imports lp_pool.py there: the point names the loader."""
    loader = {"toy/down/loader.py": "def _load():\n    from toy.down import pool  # noqa: F401\n"}
    config = up_down_config("capacity", "module_lines = 30")
    walk = walk_new_op(build_view(tmp_path, {**FILES, **loader}, config), "LpPool", like="maxpool")
    got = [
        (p.kind.value, p.line, p.predicted) for p in walk.points if p.path == "toy/down/loader.py"
    ]
    assert got == [("registration", 2, "toy.down.loader._load")]
