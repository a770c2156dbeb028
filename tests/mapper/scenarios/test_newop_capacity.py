"""A module with no room for the new op (``module_lines``): its code goes into a module of its
own, imported where the full one is loaded as a module (:mod:`mapper.scenarios.capacity`)."""

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
