"""Operator modules: installable packages of operator descriptors and their kernels.

A module is what an entry point of the group ``refstack.operator_modules`` gives (an
:class:`OperatorModule`, or a callable returning one); the built-in kernels are the module
``builtin``, registered the same way (a source tree run without installing has no entry
points: then the built-in module alone is registered directly, and that is logged).
:func:`discover` loads every entry point: a module whose import raises, whose factory fails,
whose descriptor is malformed, whose API version has another major, or which lacks a kernel a
descriptor promises, is skipped — its reason is logged (WARNING, logger ``stack.kmd.opmod``)
and kept in :meth:`ModuleRegistry.skipped` — and the rest load.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path

from stack.kmd.kernels.registry import KernelFn
from stack.kmd.opmod.capabilities import DeviceCapabilities
from stack.kmd.opmod.descriptor import Descriptor, descriptor_files, load_descriptor
from stack.kmd.opmod.errors import ModuleLoadError, OperatorModuleError, UnknownOperatorError
from stack.kmd.opmod.selection import Selection, select_from
from stack.kmd.opmod.version import SemVer, check_version

GROUP = "refstack.operator_modules"
BUILTIN = "builtin"
#: The operator-module API this stack offers; a module declares the one it was built for.
MODULE_API = SemVer(1, 0, 0)
log = logging.getLogger("stack.kmd.opmod")

Resolver = Callable[[Descriptor, str], KernelFn]


@dataclass(frozen=True, slots=True)
class OperatorModule:
    """A named, versioned set of descriptors and the resolver of their kernels
    (``resolve(descriptor, backend)`` → the kernel function, KmdError if it has none)."""

    name: str
    version: SemVer
    api_version: SemVer
    descriptors: tuple[Descriptor, ...]
    resolve: Resolver


@dataclass(frozen=True, slots=True)
class SkippedModule:
    """An entry point that was not loaded, and why."""

    name: str
    reason: str


def make_module(
    name: str,
    version: str,
    api_version: str,
    descriptors: Path | Iterable[Path],
    kernels: Mapping[tuple[str, str], KernelFn],
) -> OperatorModule:
    """A module from descriptor files (a folder, or the files) and a table
    (descriptor name, backend) → kernel. DescriptorError for a malformed descriptor;
    ModuleLoadError when a descriptor declares a backend the table has no kernel for."""
    files = descriptor_files(descriptors) if isinstance(descriptors, Path) else tuple(descriptors)
    descs = tuple(load_descriptor(f, module=name) for f in files)
    for d in descs:
        for backend in sorted(d.backends):
            if (d.name, backend) not in kernels:
                raise ModuleLoadError(
                    f"descriptor {d.name} declares backend {backend} but module {name} "
                    "has no kernel for it",
                    module=name,
                    reason="missing kernel",
                )
    table = dict(kernels)
    return OperatorModule(
        name,
        SemVer.parse(version, pointer="/module/version"),
        SemVer.parse(api_version, pointer="/module/api_version"),
        descs,
        lambda d, backend: table[(d.name, backend)],
    )


class ModuleRegistry:
    """Loaded modules and their descriptors by kernel. Thread-safe for reads after loading."""

    def __init__(self) -> None:
        self._modules: dict[str, OperatorModule] = {}
        self._skipped: list[SkippedModule] = []
        self._by_kernel: dict[str, list[Descriptor]] = {}

    def register(self, module: OperatorModule) -> None:
        """Add ``module``: VersionMismatchError when its API major differs (minor: a warning);
        OperatorModuleError when a module of that name is already registered."""
        check_version("module", module.name, module.api_version, MODULE_API)
        if module.name in self._modules:
            raise OperatorModuleError(f"operator module {module.name} is registered twice")
        self._modules[module.name] = module
        for d in module.descriptors:
            self._by_kernel.setdefault(d.kernel, []).append(d)

    def skip(self, name: str, reason: str) -> None:
        """Record (and log) that entry point ``name`` was not loaded."""
        log.warning("operator module %s skipped: %s", name, reason)
        self._skipped.append(SkippedModule(name, reason))

    def modules(self) -> tuple[OperatorModule, ...]:
        return tuple(self._modules.values())

    def skipped(self) -> tuple[SkippedModule, ...]:
        return tuple(self._skipped)

    def module(self, name: str) -> OperatorModule:
        """The module ``name``; UnknownOperatorError listing the loaded ones."""
        try:
            return self._modules[name]
        except KeyError:
            known = tuple(self._modules)
            raise UnknownOperatorError(
                f"no operator module {name!r}; loaded: {', '.join(known)}", name=name, known=known
            ) from None

    def descriptors(self) -> tuple[Descriptor, ...]:
        """Every descriptor of every module."""
        return tuple(d for m in self._modules.values() for d in m.descriptors)

    def kernels(self) -> tuple[str, ...]:
        """Kernel names some module implements."""
        return tuple(sorted(self._by_kernel))

    def candidates(self, kernel: str) -> tuple[Descriptor, ...]:
        """The descriptors implementing ``kernel``; UnknownOperatorError when none does."""
        found = self._by_kernel.get(kernel.upper())
        if not found:
            raise UnknownOperatorError(
                f"no operator module implements {kernel!r}; known: {', '.join(self.kernels())}",
                name=kernel,
                known=self.kernels(),
            )
        return tuple(found)

    def descriptor(self, name: str, *, module: str | None = None) -> Descriptor:
        """A descriptor by its name (``gemm``) or its kernel (``GEMM``: the best by priority,
        then version), optionally within one module. UnknownOperatorError lists the names."""
        pool = self._modules[module].descriptors if module in self._modules else None
        if module is not None and pool is None:
            self.module(module)  # raises, listing the modules
        every = pool if pool is not None else self.descriptors()
        named = [d for d in every if d.name == name or d.kernel == name]
        if not named:
            known = tuple(sorted({d.name for d in every}))
            raise UnknownOperatorError(
                f"no operator descriptor {name!r}; known: {', '.join(known)}",
                name=name,
                known=known,
            )
        return max(named, key=lambda d: (d.priority, d.version))

    def select(
        self,
        kernel: str,
        caps: DeviceCapabilities,
        *,
        dtype: str | None = None,
        allow_cpu_fallback: bool = False,
    ) -> Selection:
        """The best candidate for ``kernel`` that ``caps`` supports (see
        :func:`stack.kmd.opmod.selection.select_from`)."""
        return select_from(
            kernel,
            self.candidates(kernel),
            caps,
            dtype=dtype,
            allow_cpu_fallback=allow_cpu_fallback,
        )

    def kernel_fn(self, selection: Selection) -> KernelFn:
        """The kernel function of a selection."""
        return self._modules[selection.descriptor.module].resolve(
            selection.descriptor, selection.backend
        )


def discover(group: str = GROUP) -> ModuleRegistry:
    """A new registry with every module of entry-point ``group`` that loads (see the module
    docstring for what is skipped)."""
    reg = ModuleRegistry()
    for ep in sorted(entry_points(group=group), key=lambda e: e.name):
        try:
            obj = ep.load()
            module = obj() if callable(obj) else obj
        except OperatorModuleError as exc:
            reg.skip(ep.name, f"malformed: {exc.message}" + (f" ({exc.path})" if exc.path else ""))
            continue
        except Exception as exc:  # noqa: BLE001 - a plug-in may raise anything; kept as its reason
            reg.skip(ep.name, f"import failed: {type(exc).__name__}: {exc}")
            continue
        if not isinstance(module, OperatorModule):
            reg.skip(ep.name, f"entry point gives {type(module).__name__}, not an OperatorModule")
            continue
        try:
            reg.register(module)
        except OperatorModuleError as exc:
            reg.skip(ep.name, exc.message)
    if group == GROUP and BUILTIN not in (m.name for m in reg.modules()):
        _builtin_without_entry_point(reg)
    return reg


def _builtin_without_entry_point(reg: ModuleRegistry) -> None:
    """Running from a source tree that was never installed (no entry points): the built-in
    module is registered directly, and that is logged — unless it was skipped on purpose."""
    if any(s.name == BUILTIN for s in reg.skipped()):
        return
    from stack.kmd.opmod import builtin

    log.info("operator module %s registered directly: its entry point is not installed", BUILTIN)
    reg.register(builtin.module())


_lock = threading.Lock()
_process: list[ModuleRegistry] = []


def registry() -> ModuleRegistry:
    """The process-wide registry, discovered on first use."""
    with _lock:
        if not _process:
            _process.append(discover())
        return _process[0]
