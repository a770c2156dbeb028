"""A page with one table row per module of a folder gains the new op in the row of the module
its code goes into, where that row names the similar op, or a row for its new module
(:mod:`mapper.scenarios.catalogues`)."""

from __future__ import annotations

from pathlib import Path

from mapper.scenarios.newop import walk_new_op
from tests.mapper.scenarios.pool_toy import FILES
from tests.mapper.toy_map import build_view, up_down_config

PAGES = {
    "docs/kernels.md": (  # a catalogue of toy/down: a row per module, more than a page
        # about a few modules describes
        "# Kernel modules\n\nWhich module holds which kernels.\n\n"
        "| module | kernels |\n| --- | --- |\n"
        "| `toy/down/pool.py` | Maxpool, Avgpool |\n"  # line 7
        "| `toy/down/index.py` | the gathers |\n"
        "| `toy/down/pad.py` | zero padding |\n"
        "| `toy/down/backend.py` | the table of every kernel |\n"
        "| `toy/down/strided.py` | strided windows |\n"
    ),
    "docs/layout.md": (  # a catalogue too, whose rows name no op
        "# Layout\n\nWhere the code is.\n\n"
        "- `toy/down/pool.py`: the windowed kernels\n"
        "- `toy/down/index.py`: the indexing kernels\n"
        "- `toy/down/pad.py`: the padding kernels\n"
    ),
}


def _rows(tmp_path: Path, settings: str) -> list[tuple[str | None, int | None, str]]:
    config = up_down_config("catalogues", settings)
    view = build_view(tmp_path, {**FILES, **PAGES}, config)
    walk = walk_new_op(view, "LpPool", like="maxpool")
    rows = [p for p in walk.points if p.kind.value == "doc" and " row " in p.action]
    return sorted((p.path, p.line, p.action) for p in rows)


def test_the_row_of_the_module_the_op_goes_into_lists_it(tmp_path: Path) -> None:
    """lppool goes into pool.py: kernels.md's row of pool.py names Maxpool (the op, as OpType
    spells it), so it lists LpPool too; layout.md's row of pool.py names no op, so it does not
    change."""
    assert _rows(tmp_path, "") == [
        (
            "docs/kernels.md",
            7,
            "update doc:docs/kernels.md#kernel-modules: add LpPool to the row of "
            "toy/down/pool.py, which lists the similar op",
        )
    ]


def test_a_new_module_gets_a_row_in_every_catalogue_of_its_folder(tmp_path: Path) -> None:
    """pool.py has no room (module_lines = 30): lppool goes to lp_pool.py, and both pages,
    which have a row for pool.py, gain one for it."""
    assert _rows(tmp_path, "module_lines = 30") == [
        (
            "docs/kernels.md",
            7,
            "update doc:docs/kernels.md#kernel-modules: add a row for toy/down/lp_pool.py "
            "beside toy/down/pool.py's, for LpPool",
        ),
        (
            "docs/layout.md",
            5,
            "update doc:docs/layout.md#layout: add a row for toy/down/lp_pool.py beside "
            "toy/down/pool.py's, for LpPool",
        ),
    ]
