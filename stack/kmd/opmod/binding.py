"""Which implementation a device runs for each kernel: the selection, made once per kernel.

A device opens with an :class:`OperatorBinding` over the module registry and its own
capabilities; the KMD's planner asks it for the kernel function of every blob it decodes. The
first request for a kernel selects (no CPU fallback: a device runs its own backend) and keeps
the result; UnsupportedOperatorError refuses the submit that needed it.
"""

from __future__ import annotations

import threading

from stack.kmd.kernels.ids import KernelId
from stack.kmd.kernels.registry import KernelFn
from stack.kmd.opmod.capabilities import DeviceCapabilities
from stack.kmd.opmod.module import ModuleRegistry
from stack.kmd.opmod.selection import Selection


class OperatorBinding:
    """Kernel id → (selection, function) for one device. Thread-safe."""

    def __init__(self, modules: ModuleRegistry, caps: DeviceCapabilities) -> None:
        self.modules = modules
        self.caps = caps
        self._lock = threading.Lock()
        self._bound: dict[KernelId, tuple[Selection, KernelFn]] = {}

    def selection(self, kernel_id: KernelId) -> Selection:
        """The implementation chosen for ``kernel_id`` on this device."""
        return self._bind(kernel_id)[0]

    def kernel(self, kernel_id: KernelId) -> KernelFn:
        """The kernel function this device runs for ``kernel_id``."""
        return self._bind(kernel_id)[1]

    def _bind(self, kernel_id: KernelId) -> tuple[Selection, KernelFn]:
        with self._lock:
            hit = self._bound.get(kernel_id)
            if hit is None:
                sel = self.modules.select(KernelId(kernel_id).name, self.caps)
                hit = (sel, self.modules.kernel_fn(sel))
                self._bound[kernel_id] = hit
            return hit
