"""Turning submitted blobs into launches: decode, check against the kernel ABI, resolve every
tensor address to a view of the submitting context's memory. All before anything runs.

Decoded-and-checked blobs are cached by their bytes (the UMD re-submits the same blobs), and so
are the array views of a blob bound in a context: a re-submission still looks every tensor up
in the page table, and reuses the views only when each lookup finds the very same allocation.
Any free clears the view cache, so it never keeps freed storage alive.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stack.kmd import blob as blobfmt
from stack.kmd.command import Launch
from stack.kmd.errors import KernelArgumentError
from stack.kmd.kernels import registry
from stack.kmd.kernels.abi import KernelAbi, abi_of
from stack.kmd.kernels.registry import KernelBackend, KernelFn
from stack.kmd.memory import AddressSpace, Allocation

CACHE_LIMIT = 8192


@dataclass(frozen=True, slots=True)
class Plan:
    """A decoded blob checked against its ABI, ready to be bound to memory."""

    kernel: str
    fn: KernelFn
    params: tuple[
        tuple[int, int, tuple[int, ...], Any, int], ...
    ]  # addr, nbytes, shape, dtype, used
    n_inputs: int
    ints: tuple[int, ...]
    floats: tuple[float, ...]


def check_abi(abi: KernelAbi, b: blobfmt.InstructionBlob) -> int:
    """Raise KernelArgumentError unless ``b`` fits ``abi``; return the number of inputs."""
    n_in = len(b.params) - len(abi.outputs)
    lo = 1 if abi.variadic else len(abi.inputs)
    hi = blobfmt.MAX_ITEMS if abi.variadic else len(abi.inputs) + len(abi.optional)
    if not lo <= n_in <= hi:
        raise KernelArgumentError(
            f"{abi.name} takes {lo}..{hi} inputs + {len(abi.outputs)} outputs, "
            f"got {len(b.params)} params",
            kernel=abi.name,
            field="param_count",
        )
    if abi.int_list is None:
        _check_imms(abi, "ints", len(b.ints), [i.default for i in abi.ints])
    _check_imms(abi, "floats", len(b.floats), [f.default for f in abi.floats])
    return n_in


def _check_imms(abi: KernelAbi, kind: str, given: int, defaults: list[Any]) -> None:
    if given > len(defaults) or any(d is None for d in defaults[given:]):
        names = [i.name for i in (abi.ints if kind == "ints" else abi.floats)]
        raise KernelArgumentError(
            f"{abi.name} takes {kind} {names} (required ones first), got {given}",
            kernel=abi.name,
            field=kind,
        )


class Planner:
    """Per-device cache of plans for one backend."""

    def __init__(self, backend: KernelBackend) -> None:
        self.backend = backend
        self._cache: dict[bytes, Plan] = {}
        self._bound: dict[tuple[int, bytes], tuple[list[Allocation], Launch]] = {}
        self._commands: dict[
            tuple[int, tuple[bytes, ...]], tuple[list[Launch], list[Allocation]]
        ] = {}

    def plan(self, data: bytes) -> Plan:
        """The checked plan of blob ``data`` (BlobFormatError / KernelArgumentError)."""
        hit = self._cache.get(data)
        if hit is not None:
            return hit
        b = blobfmt.decode(data)
        abi = abi_of(b.kernel_id)
        n_in = check_abi(abi, b)
        params = tuple(
            (p.addr, p.nbytes, p.shape, p.dtype.numpy, p.elements * p.dtype.itemsize)
            for p in b.params
        )
        fn = registry.kernel(self.backend.name, b.kernel_id)
        plan = Plan(abi.name, fn, params, n_in, abi.int_values(b.ints), abi.float_values(b.floats))
        if len(self._cache) >= CACHE_LIMIT:
            self._cache.clear()
        self._cache[data] = plan
        return plan

    def bind(
        self, data: bytes, ctx: int, space: AddressSpace, touched: dict[int, Allocation]
    ) -> Launch:
        """Plan ``data`` and resolve every tensor in ``ctx``'s memory (AccessViolationError)."""
        plan = self.plan(data)
        allocs = [space.lookup(ctx, p[0], p[1]) for p in plan.params]
        for alloc in allocs:
            touched[alloc.va] = alloc
        hit = self._bound.get((ctx, data))
        if hit is not None and all(a is b for a, b in zip(hit[0], allocs, strict=True)):
            return hit[1]
        view = self.backend.view
        views = [
            view(a.storage, addr - a.va, used, shape, dtype)
            for a, (addr, _, shape, dtype, used) in zip(allocs, plan.params, strict=True)
        ]
        n = plan.n_inputs
        addrs = tuple(p[0] for p in plan.params)
        launch = Launch(plan.kernel, plan.fn, views[:n], views[n:], plan.ints, plan.floats, addrs)
        if len(self._bound) >= CACHE_LIMIT:
            self._bound.clear()
        self._bound[(ctx, data)] = (allocs, launch)
        return launch

    def bind_all(
        self, blobs: tuple[bytes, ...], ctx: int, space: AddressSpace
    ) -> tuple[list[Launch], list[Allocation]]:
        """The launches of a whole command and the distinct allocations it touches.

        A command submitted again (same blobs, same context) is re-validated by checking that
        each distinct allocation it touches is still live — its ranges were checked against
        those very allocations, whose extent and owner never change — instead of every tensor.
        """
        hit = self._commands.get((ctx, blobs))
        if hit is not None and all(space.is_live(alloc) for alloc in hit[1]):
            return hit
        touched: dict[int, Allocation] = {}
        launches = [self.bind(b, ctx, space, touched) for b in blobs]
        result = (launches, list(touched.values()))
        if len(self._commands) >= CACHE_LIMIT:
            self._commands.clear()
        self._commands[(ctx, blobs)] = result
        return result

    def forget_views(self) -> None:
        """Drop cached views (called on every free, so no freed storage stays referenced)."""
        self._bound.clear()
        self._commands.clear()
