"""Turning submitted blobs into launches: decode, check against the kernel ABI, resolve every
tensor address to a view of the submitting context's memory. All before anything runs.

Decoded-and-checked blobs are cached by their bytes (the same blob is planned once whichever
context submits it). Resolving addresses to views is done per submit; work that runs again and
again is recorded once as a command buffer (:mod:`stack.kmd.cmdbuf`), which keeps its views.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from stack.kmd import blob as blobfmt
from stack.kmd.command import Launch
from stack.kmd.errors import KernelArgumentError
from stack.kmd.kernels import registry
from stack.kmd.kernels.abi import KernelAbi, abi_of
from stack.kmd.kernels.ids import KernelId
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
    tiles: int  # grid[0] of the launch configuration (see stack.kmd.kernels.parallel)
    launch: blobfmt.LaunchConfig  # the whole configuration (GPU kernels read the block)
    prepare: registry.Preparer | None = None  # the kernel's, for launches a buffer records


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
    """Per-device cache of plans for one backend (by blob bytes: context-free, so valid across
    contexts and frees). Binding to memory is not cached here: a command buffer
    (:mod:`stack.kmd.cmdbuf`) is what keeps bound launches for re-execution. ``kernels``
    gives the function a kernel id runs (the device's operator binding); None: the backend's
    registered kernel."""

    def __init__(
        self, backend: KernelBackend, kernels: Callable[[KernelId], KernelFn] | None = None
    ) -> None:
        self.backend = backend
        self._kernels = kernels
        self._cache: dict[bytes, Plan] = {}

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
        if self._kernels is not None:
            fn = self._kernels(b.kernel_id)
        else:
            fn = registry.kernel(self.backend.name, b.kernel_id)
        plan = Plan(
            abi.name, fn, params, n_in, abi.int_values(b.ints), abi.float_values(b.floats),
            b.launch.grid[0], b.launch, registry.preparer(fn),
        )  # fmt: skip
        if len(self._cache) >= CACHE_LIMIT:
            self._cache.clear()
        self._cache[data] = plan
        return plan

    def bind(
        self,
        data: bytes,
        ctx: int,
        space: AddressSpace,
        touched: dict[int, Allocation],
        prepare: bool = False,
    ) -> Launch:
        """Plan ``data`` and resolve every tensor in ``ctx``'s memory (AccessViolationError);
        ``prepare``: let the kernel's preparer make the launch's closure (command buffers)."""
        plan = self.plan(data)
        allocs = [space.lookup(ctx, p[0], p[1]) for p in plan.params]
        for alloc in allocs:
            touched[alloc.va] = alloc
        view = self.backend.view
        views = [
            view(a.storage, addr - a.va, used, shape, dtype)
            for a, (addr, _, shape, dtype, used) in zip(allocs, plan.params, strict=True)
        ]
        n = plan.n_inputs
        addrs = tuple(p[0] for p in plan.params)
        written = tuple({id(a): a for a in allocs[n:]}.values())
        return Launch(
            plan.kernel, plan.fn, views[:n], views[n:], plan.ints, plan.floats, addrs, plan.tiles,
            plan.launch, plan.prepare if prepare else None, tuple(allocs[:n]), written,
        )  # fmt: skip

    def bind_all(
        self, blobs: tuple[bytes, ...], ctx: int, space: AddressSpace, prepare: bool = False
    ) -> tuple[list[Launch], list[Allocation]]:
        """The launches of a whole command and the distinct allocations it touches
        (``prepare``: as :meth:`bind`)."""
        touched: dict[int, Allocation] = {}
        launches = [self.bind(b, ctx, space, touched, prepare) for b in blobs]
        return launches, list(touched.values())
