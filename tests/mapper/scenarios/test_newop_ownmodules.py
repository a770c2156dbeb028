"""A code folder whose ops each have a module of their own: the new op's counterpart of code
in a module several ops share goes into a module of its own there, listed where the folder's
op modules are (:mod:`mapper.scenarios.ownmodules`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from mapper.scenarios.newop import walk_new_op
from tests.mapper.scenarios.pool_toy import FILES
from tests.mapper.toy_map import build_view, kernel_ids, op_types, rules_module, up_down_config

_OWN = ("PAD", "TILE", "ABS", "CEIL")  # each in a module named after it, listed by backend.py


def _op_module(op: str) -> str:
    low = op.lower()
    return (
        f"from toy.down.kernels import KernelId\n\n\ndef {low}(x):\n    return x\n\n\n"
        f"TABLE = {{KernelId.{op}: {low}}}\n"
    )


def _files(own: tuple[str, ...], shared: str = "windows") -> dict[str, str]:
    """The pool toy with maxpool's module named ``shared`` and a module per op of ``own``."""
    ops = ("MAXPOOL", "AVGPOOL", "GATHER", *own)
    names = ", ".join(sorted(["index", shared, *(op.lower() for op in own)]))
    files = {k: v for k, v in FILES.items() if k not in ("toy/down/pad.py", "toy/down/pool.py")}
    files[f"toy/down/{shared}.py"] = FILES["toy/down/pool.py"]
    files["toy/down/strided.py"] = FILES["toy/down/strided.py"].replace("pool", shared)
    files.update({f"toy/down/{op.lower()}.py": _op_module(op) for op in own})
    files["toy/up/ir.py"] = op_types(ops)
    files["toy/down/kernels.py"] = kernel_ids(ops)
    files["toy/down/backend.py"] = (  # loads every kernel module as a module
        f"from toy.down import {names}\n\nMODULES = ({names},)\n\n\n"
        "def table():\n    return {k: f for m in MODULES for k, f in m.TABLE.items()}\n"
    )
    return files


def _down(
    tmp_path: Path, own: tuple[str, ...], shared: str = "windows"
) -> list[tuple[str, str | None, int | None, str]]:
    view = build_view(tmp_path, _files(own, shared), up_down_config("own"))
    walk = walk_new_op(view, "LpPool", like="maxpool")
    plan = next(p for p in walk.layers if p.layer == "down")
    return [(p.kind.value, p.path, p.line, p.predicted) for p in plan.points]


def test_a_folder_of_op_modules_gives_the_new_op_a_module_of_its_own(tmp_path: Path) -> None:
    """Four ops of toy/down each have a module: lppool's counterpart of maxpool (in
    windows.py, which several ops share) goes into lp_pool.py, and backend.py, which imports
    the four, imports it beside them; windows.py's table gets nothing."""
    assert _down(tmp_path, _OWN) == [
        ("implementation", "toy/down/lp_pool.py", 1, "toy.down.lp_pool.lppool"),
        ("registration", "toy/down/backend.py", 1, ""),
        ("use", "toy/down/backend.py", 3, "toy.down.backend.MODULES"),
        ("vocabulary", "toy/down/kernels.py", 5, "toy.down.kernels.KernelId.LPPOOL"),
    ]


@pytest.mark.parametrize("own", [_OWN[:3], (*_OWN[:3], "BINARY")])
def test_three_op_modules_are_no_convention(tmp_path: Path, own: tuple[str, ...]) -> None:
    """Three ops with modules of their own make no convention, nor does a fourth module named
    after a family's generic kernel (``binary.py``: no ONNX operator): the counterpart goes
    beside maxpool in windows.py, with its table row."""
    assert _down(tmp_path, own) == _beside("windows")


def test_a_module_named_after_the_new_ops_family_keeps_it(tmp_path: Path) -> None:
    """Four op modules, but maxpool's module is pool.py, a word of LpPool's name: the family
    module the new op joins gains it."""
    assert _down(tmp_path, _OWN, "pool") == _beside("pool")


def _beside(shared: str) -> list[tuple[str, str | None, int | None, str]]:
    return [
        ("implementation", f"toy/down/{shared}.py", 11, f"toy.down.{shared}.lppool"),
        ("registration", f"toy/down/{shared}.py", 24, f"toy.down.{shared}.TABLE"),
        ("vocabulary", "toy/down/kernels.py", 5, "toy.down.kernels.KernelId.LPPOOL"),
    ]


_REGISTERED = {
    **FILES,
    "toy/up/rules.py": rules_module("GATHER"),
    "toy/up/maxpool.py": (  # a module of maxpool's own, its rule registered where it is defined
        "from toy.up.ir import OpType\nfrom toy.up.rules import register\n\n\n"
        "@register(OpType.MAXPOOL)\ndef maxpool_rule(node):\n    return node\n"
    ),
}


def test_a_registered_definition_of_a_module_of_its_own_gets_a_sibling_module(
    tmp_path: Path,
) -> None:
    """maxpool's rule lives, registered, in toy/up/maxpool.py, a module about maxpool alone:
    lppool's rule and its registration go into a new toy/up/lp_pool.py, not beside it."""
    view = build_view(tmp_path, _REGISTERED, up_down_config("own"))
    walk = walk_new_op(view, "LpPool", like="maxpool")
    plan = next(p for p in walk.layers if p.layer == "up")
    assert [(p.kind.value, p.path, p.line, p.predicted) for p in plan.points] == [
        ("implementation", "toy/up/lp_pool.py", 1, "toy.up.lp_pool.lppool_rule"),
        ("registration", "toy/up/lp_pool.py", 1, ""),
        ("vocabulary", "toy/up/ir.py", 5, "toy.up.ir.OpType.LPPOOL"),
    ]


def test_a_sibling_module_keeps_the_prefix_before_the_similar_ops_name(tmp_path: Path) -> None:
    """ops_maxpool.py, a module of maxpool's own: lppool's goes into ops_lp_pool.py."""
    files = {k: v for k, v in _REGISTERED.items() if k != "toy/up/maxpool.py"}
    files["toy/up/ops_maxpool.py"] = _REGISTERED["toy/up/maxpool.py"]
    view = build_view(tmp_path, files, up_down_config("own"))
    walk = walk_new_op(view, "LpPool", like="maxpool")
    plan = next(p for p in walk.layers if p.layer == "up")
    assert [(p.kind.value, p.path, p.predicted) for p in plan.points][:2] == [
        ("implementation", "toy/up/ops_lp_pool.py", "toy.up.ops_lp_pool.lppool_rule"),
        ("registration", "toy/up/ops_lp_pool.py", ""),
    ]


def test_a_module_of_the_similar_ops_defining_nothing_named_after_it_gets_a_sibling(
    tmp_path: Path,
) -> None:
    """abi_maxpool.py registers maxpool's entry with a module-level call and defines nothing
    named after it: lppool gets abi_lp_pool.py, a module with no definition to name."""
    files = {
        **FILES,
        "toy/down/abi.py": "ABIS = {}\n\n\ndef register(kid, arity):\n    ABIS[kid] = arity\n",
        "toy/down/abi_maxpool.py": (
            "from toy.down.abi import register\nfrom toy.down.kernels import KernelId\n\n"
            "register(KernelId.MAXPOOL, 1)\n"
        ),
    }
    view = build_view(tmp_path, files, up_down_config("own"))
    walk = walk_new_op(view, "LpPool", like="maxpool")
    plan = next(p for p in walk.layers if p.layer == "down")
    assert ("implementation", "toy/down/abi_lp_pool.py", 1, "") in [
        (p.kind.value, p.path, p.line, p.predicted) for p in plan.points
    ]
    (made,) = [p for p in plan.points if p.path == "toy/down/abi_lp_pool.py"]
    assert [(h.source, h.target, h.line) for h in made.why] == [
        ("file:toy/down/abi_maxpool.py", "symbol:toy.down.kernels.KernelId.MAXPOOL", 4)
    ]


def test_the_new_module_joins_the_lists_naming_the_folders_op_modules(tmp_path: Path) -> None:
    """backend.py imports a function from each op module, re-exports them in ``__all__`` and
    calls each in ``kernels()``: maxpool's own code (in windows.py) is named in neither, yet
    lp_pool.py's function joins both, beside the import."""
    files = _files(_OWN)
    files["toy/down/backend.py"] = (
        "".join(f"from toy.down.{op.lower()} import {op.lower()}\n" for op in _OWN)
        + '\n__all__ = ["abs", "ceil", "pad", "tile"]\n\n\n'
        + "def kernels(x):\n    return [abs(x), ceil(x), pad(x), tile(x)]\n"
    )
    view = build_view(tmp_path, files, up_down_config("own"))
    walk = walk_new_op(view, "LpPool", like="maxpool")
    plan = next(p for p in walk.layers if p.layer == "down")
    assert [(p.kind.value, p.path, p.line, p.predicted) for p in plan.points] == [
        ("implementation", "toy/down/lp_pool.py", 1, "toy.down.lp_pool.lppool"),
        ("registration", "toy/down/backend.py", 4, ""),
        ("use", "toy/down/backend.py", 6, "toy.down.backend.__all__"),
        ("use", "toy/down/backend.py", 10, "toy.down.backend.kernels"),
        ("vocabulary", "toy/down/kernels.py", 5, "toy.down.kernels.KernelId.LPPOOL"),
    ]


@pytest.mark.parametrize(("classes", "made"), [(3, ["toy.down.lp_pool.LpPoolKernel"]), (1, [])])
def test_the_new_module_defines_what_half_the_folders_op_modules_define_after_their_op(
    tmp_path: Path, classes: int, made: list[str]
) -> None:
    """A class named after its op (``PadKernel`` in pad.py) in three of the four op modules is
    the folder's template ``{Camel}Kernel``: lp_pool.py gets LpPoolKernel, modelled on the
    first module defining one. In one module of four it is no template; nor is the function
    each module defines after its op (``pad``), which lppool's counterpart of maxpool is."""
    files = _files(_OWN)
    for op in _OWN[:classes]:
        camel = op.capitalize()
        files[f"toy/down/{op.lower()}.py"] += f"\n\nclass {camel}Kernel:\n    arity = 1\n"
    view = build_view(tmp_path, files, up_down_config("own"))
    walk = walk_new_op(view, "LpPool", like="maxpool")
    new = [p for p in walk.points if p.path == "toy/down/lp_pool.py" and "Kernel" in p.predicted]
    assert [p.predicted for p in new] == made
    for point in new:
        (hop,) = point.why
        assert (hop.source, hop.path, hop.line) == (
            "symbol:toy.down.abs.AbsKernel",
            "toy/down/abs.py",
            11,
        )
        assert hop.detail == "3 of the 4 modules {}.py define {Camel}Kernel"


def test_a_module_made_for_want_of_room_joins_the_lists_with_room(tmp_path: Path) -> None:
    """windows.py has no room (module_lines = 30), so lp_pool.py is made before the folder's
    convention is looked at: it still joins backend.py's import of the op modules. full.py,
    which imports them too but is at its 30 lines, is left alone while backend.py has room."""
    files = _files(_OWN)
    names = ", ".join(op.lower() for op in _OWN)
    files["toy/down/full.py"] = f"from toy.down import {names}\n" + "\n" * 28 + "X = 1\n"
    view = build_view(tmp_path, files, up_down_config("own", "module_lines = 30"))
    walk = walk_new_op(view, "LpPool", like="maxpool")
    plan = next(p for p in walk.layers if p.layer == "down")
    points = [(p.kind.value, p.path, p.line, p.predicted) for p in plan.points]
    assert ("registration", "toy/down/backend.py", 1, "") in points
    assert [p for p in points if p[1] == "toy/down/full.py"] == []
    files["toy/down/full.py"] = f"from toy.down import {names}\n\nX = 1\n"  # room again
    (tmp_path / "room").mkdir()
    view = build_view(tmp_path / "room", files, up_down_config("own", "module_lines = 30"))
    walk = walk_new_op(view, "LpPool", like="maxpool")
    assert ("registration", "toy/down/full.py", 1, "") in [
        (p.kind.value, p.path, p.line, p.predicted) for p in walk.points
    ]


def test_a_module_named_after_a_generic_kernel_is_shared(tmp_path: Path) -> None:
    """maxpool's code is in binary.py, named after BINARY, a generic kernel many operators
    share and no ONNX operator: a family module, not one devoted to an op, so lppool's
    counterpart still goes into a module of its own, as the folder's four op modules are."""
    ops = ("MAXPOOL", "AVGPOOL", "GATHER", *_OWN, "BINARY")
    files = _files(_OWN, "binary")
    files["toy/up/ir.py"] = op_types(ops)
    files["toy/down/kernels.py"] = kernel_ids(ops)
    view = build_view(tmp_path, files, up_down_config("own"))
    walk = walk_new_op(view, "LpPool", like="maxpool")
    plan = next(p for p in walk.layers if p.layer == "down")
    assert ("implementation", "toy/down/lp_pool.py", 1, "toy.down.lp_pool.lppool") in [
        (p.kind.value, p.path, p.line, p.predicted) for p in plan.points
    ]
