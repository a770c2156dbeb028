"""A toy two-layer stack whose pooling module is near a small module length limit: maxpool,
avgpool and a table in toy/down/pool.py (24 lines, maxpool's 7), a backend listing the kernel
modules as modules, and a module importing one of pool.py's helpers."""

from __future__ import annotations

from tests.mapper.toy_map import kernel_ids, op_types, rules_module

_OPS = ("MAXPOOL", "AVGPOOL", "GATHER", "PAD")
_POOL = '''"""Pooling kernels."""

from toy.down.kernels import KernelId


def window(x: list[float], k: int) -> list[list[float]]:
    """The windows of x."""
    return [x[i : i + k] for i in range(len(x) - k + 1)]


def maxpool(x: list[float], k: int) -> list[float]:
    """The max of each window."""
    out = []
    for w in window(x, k):
        out.append(max(w))
    return out


def avgpool(x: list[float], k: int) -> list[float]:
    """The mean of each window."""
    return [sum(w) / k for w in window(x, k)]


TABLE = {KernelId.MAXPOOL: maxpool, KernelId.AVGPOOL: avgpool}
'''
FILES = {
    "toy/__init__.py": "",
    "toy/up/__init__.py": "",
    "toy/down/__init__.py": "",
    "toy/up/ir.py": op_types(_OPS),
    "toy/up/rules.py": rules_module("MAXPOOL", "GATHER"),
    "toy/down/kernels.py": kernel_ids(_OPS),
    "toy/down/pool.py": _POOL,  # 24 lines, maxpool's 7 of them
    "toy/down/index.py": (
        "from toy.down.kernels import KernelId\n\n\ndef gather(x, i):\n"
        "    return [x[j] for j in i]\n\n\nTABLE = {KernelId.GATHER: gather}\n"
    ),
    "toy/down/pad.py": (
        "from toy.down.kernels import KernelId\n\n\ndef pad(x, n):\n"
        "    return [0.0] * n + x\n\n\nTABLE = {KernelId.PAD: pad}\n"
    ),
    "toy/down/backend.py": (  # loads the kernel modules as modules
        "from toy.down import index, pad, pool\n\nMODULES = (pool, index, pad)\n\n\n"
        "def table():\n    return {k: f for m in MODULES for k, f in m.TABLE.items()}\n"
    ),
    "toy/down/strided.py": (  # uses a helper of pool.py, none of maxpool's code
        "from toy.down.pool import window\n\n\ndef strided(x, k, s):\n"
        "    return window(x, k)[::s]\n"
    ),
}
