"""A table module without room for the new op's entry, that other modules register entries
into, gets it from a new module of theirs (:mod:`mapper.scenarios.tables`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mapper.scenarios.newop import walk_new_op
from tests.mapper.scenarios.pool_toy import FILES
from tests.mapper.toy_map import build_view, up_down_config

TABLE = '''"""Kernel ABIs: what each kernel reads and writes."""

from toy.down.kernels import KernelId


def register(kernel, reads, writes):
    """Enter one kernel's ABI (the modules beside this one call it)."""
    ABIS[kernel] = (reads, writes)


ABIS = {
    KernelId.MAXPOOL: (
        ("X",),
        ("Y",),
    ),
    KernelId.AVGPOOL: (
        ("X",),
        ("Y",),
    ),
    KernelId.PAD: (
        ("X",),
        ("Y",),
    ),
}

from toy.down import abi_index  # noqa: E402,F401
'''
REGISTRANT = (
    "from toy.down.abi import register\nfrom toy.down.kernels import KernelId\n\n"
    'register(KernelId.GATHER, ("X", "I"), ("Y",))\n'
)


def _abi_points(tmp_path: Path, files: dict[str, str], settings: str) -> list[tuple[str, ...]]:
    view = build_view(tmp_path, {**FILES, **files}, up_down_config("tables", settings))
    walk = walk_new_op(view, "LpPool", like="maxpool")
    return sorted(
        (p.kind.value, p.path or "", str(p.line), p.predicted)
        for p in walk.points
        if "abi" in (p.path or "")
    )


def test_a_full_table_takes_the_entry_from_a_new_module_registering_it(tmp_path: Path) -> None:
    """abi.py has 26 lines and its entries 4 each: past 29, so LpPool's entry is registered
    from abi_lp_pool.py, as abi_index.py registers GATHER's; abi.py, which imports
    abi_index, imports it too."""
    files = {"toy/down/abi.py": TABLE, "toy/down/abi_index.py": REGISTRANT}
    assert _abi_points(tmp_path, files, "module_lines = 29") == [
        ("implementation", "toy/down/abi_lp_pool.py", "1", ""),
        ("registration", "toy/down/abi.py", "26", ""),
        ("use", "toy/down/abi.py", "12", "toy.down.abi.ABIS"),
    ]


@pytest.mark.parametrize(
    ("registrant", "settings"),
    [
        (True, "module_lines = 30"),  # 26 + 4 fit
        (False, "module_lines = 27"),  # 25 + 4 do not fit, but no module registers into it
    ],
)
def test_a_table_with_room_or_no_way_in_from_outside_gains_the_entry_in_place(
    tmp_path: Path, registrant: bool, settings: str
) -> None:
    table = (
        TABLE
        if registrant
        else TABLE.replace("\nfrom toy.down import abi_index  # noqa: E402,F401\n", "\n")
    )
    files = {"toy/down/abi.py": table}
    if registrant:
        files["toy/down/abi_index.py"] = REGISTRANT
    assert _abi_points(tmp_path, files, settings) == [
        ("use", "toy/down/abi.py", "12", "toy.down.abi.ABIS"),
    ]
