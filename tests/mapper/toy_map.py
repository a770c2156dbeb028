"""Toy stacks for map tests: write a tree of files, ingest it without embeddings, open it."""

from __future__ import annotations

import textwrap
from pathlib import Path

from mapper.impact import MapView, open_view
from mapper.ingest import ingest


def write_tree(root: Path, files: dict[str, str], *, dedent: bool = False) -> None:
    """Write FILES (path → text) under ROOT, making folders; ``dedent`` strips the common
    indentation and the leading blank lines of each text."""
    for path, text in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        body = textwrap.dedent(text).lstrip() if dedent else text
        (root / path).write_text(body, encoding="utf-8")


def build_view(
    root: Path, files: dict[str, str], config: str | None = None, *, dedent: bool = False
) -> MapView:
    """Write FILES (and CONFIG as stackmap.toml) under ROOT, ingest it, and open its map."""
    if config is not None:
        (root / "stackmap.toml").write_text(config, encoding="utf-8")
    write_tree(root, files, dedent=dedent)
    ingest(root, embed=False, progress=False)
    return open_view(root)


def up_down_config(
    name: str, settings: str = "", up: str = "IR and rules.", down: str = "Kernels."
) -> str:
    """The stackmap.toml of a two-layer toy stack, ``up`` (toy/up) over ``down`` (toy/down),
    with ``settings`` (TOML lines) added to its ``[stackmap]`` table."""
    return (
        f'[stackmap]\nname = "{name}"\n{settings}\n'
        f'[[layers]]\nid = "up"\nname = "Up"\npaths = ["toy/up/**"]\ndescription = "{up}"\n\n'
        f'[[layers]]\nid = "down"\nname = "Down"\npaths = ["toy/down/**"]\n'
        f'description = "{down}"\n'
    )


def op_types(ops: tuple[str, ...], values: tuple[str, ...] | None = None) -> str:
    """A toy ``toy/up/ir.py``: ``class OpType(enum.Enum)`` with one member per op, valued as
    ``values`` give (the op title-cased by default)."""
    shown = values if values is not None else tuple(op.title() for op in ops)
    members = "".join(f'    {k} = "{v}"\n' for k, v in zip(ops, shown, strict=True))
    return "import enum\n\n\nclass OpType(enum.Enum):\n" + members


def kernel_ids(ops: tuple[str, ...]) -> str:
    """A toy ``toy/down/kernels.py``: ``class KernelId(enum.IntEnum)`` numbering ``ops`` from 1."""
    members = "".join(f"    {k} = {i}\n" for i, k in enumerate(ops, 1))
    return "import enum\n\n\nclass KernelId(enum.IntEnum):\n" + members


def rules_module(*ops: str, more: str = "") -> str:
    """A toy ``toy/up/rules.py``: a registry decorator keyed by ``toy.up.ir.OpType`` and one
    registered rule per op (``SCATTER_ND`` → ``scatter_nd_rule``), then ``more`` (dedented),
    with the indentation the dedenting :func:`build_view` leaves alone."""
    head = textwrap.dedent(
        """\
        from toy.up.ir import OpType

        RULES = {}


        def register(op):
            def deco(fn):
                RULES[op] = fn
                return fn
            return deco
        """
    )
    rules = "".join(
        f"\n\n@register(OpType.{op})\ndef {op.lower()}_rule(node):\n    return node\n" for op in ops
    )
    return head + rules + (f"\n\n{textwrap.dedent(more).strip()}\n" if more else "")
