"""A page following the ops as they are added (it names three of the five newest, by the op
vocabulary's values) takes the new op, the next one, whether or not it names the similar op
(:mod:`mapper.scenarios.newest`)."""

from __future__ import annotations

from pathlib import Path

from mapper.scenarios import newest
from mapper.scenarios.newop import walk_new_op
from mapper.scenarios.opfamily import ops
from tests.mapper.scenarios.pool_toy import FILES
from tests.mapper.toy_map import build_view, kernel_ids, op_types, up_down_config

_OPS = ("MAXPOOL", "AVGPOOL", "GATHER", "PAD", "TILE", "ABS", "CEIL")  # KernelId 1..7
PAGES = {
    "docs/changes.md": (
        "# Kernels as they came\n\n"
        "Tile repeats its input.\n\nAbs takes magnitudes.\n\nCeil rounds up.\n"
    ),
    "docs/gathers.md": "# Indexing\n\nGather and Pad move elements.\n",  # two of the newest
}


def test_a_page_naming_three_of_the_five_newest_ops_takes_the_next(tmp_path: Path) -> None:
    files = {**FILES, **PAGES}
    files["toy/up/ir.py"] = op_types(_OPS)
    files["toy/down/kernels.py"] = kernel_ids(_OPS)
    view = build_view(tmp_path, files, up_down_config("newest"))
    assert newest.newest_ops(ops(view)) == ["gather", "pad", "tile", "abs", "ceil"]
    walk = walk_new_op(view, "LpPool", like="maxpool")
    found = [p for p in walk.points if p.path in PAGES]
    assert [(p.path, p.line, p.action) for p in found] == [
        (
            "docs/changes.md",
            1,
            "add LpPool, the next op, to doc:docs/changes.md#kernels-as-they-came: it names "
            "abs, ceil, tile, 3 of the 5 newest ops",
        )
    ]
    (hop,) = found[0].why
    assert (hop.source, hop.target, hop.path) == (
        "doc:docs/changes.md#kernels-as-they-came",
        "symbol:toy.down.kernels.KernelId.CEIL",  # the value numbering it
        "docs/changes.md",
    )
