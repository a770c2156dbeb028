"""The in-process UMD: a KMD device, the translation pipeline, the shared kernel cache, sessions."""

from __future__ import annotations

from stack.kmd.device import KmdDevice
from stack.kmd.kernels.ids import KernelId
from stack.kmd.opmod import Descriptor, DeviceCapabilities, ModuleRegistry
from stack.umd.cache import KernelCache
from stack.umd.errors import ClosedError, InvalidRequestError
from stack.umd.kmd_errors import kmd_call
from stack.umd.pipeline import Pipeline
from stack.umd.program import Program
from stack.umd.session import UmdSession
from stack.umd.sessions import SessionManager
from stack.umd.tuning import open_default


class Umd:
    """The user-mode driver, in process (the runtime's fast path) or behind the gRPC service.

    Owns a :class:`~stack.kmd.KmdDevice` (or uses the one given, without closing it), a
    :class:`~stack.umd.pipeline.Pipeline`, a kernel cache shared by all sessions (LRU,
    ``cache_capacity`` entries) and the :class:`~stack.umd.sessions.SessionManager`.
    Thread-safe. ``close`` closes every session, then the device if owned.
    """

    def __init__(
        self,
        backend: str | None = None,
        *,
        cache_capacity: int = 4096,
        device: KmdDevice | None = None,
        max_sessions: int = 1024,
    ) -> None:
        self._owns_device = device is None
        with kmd_call("open"):
            self.device = device if device is not None else KmdDevice(backend)
        self.pipeline = Pipeline(
            target=self.device.backend,
            threads=self.device.threads,
            tuning=open_default(),
            capabilities=self.device.capabilities(),
        )
        self.cache: KernelCache[Program] = KernelCache(cache_capacity)
        self.sessions = SessionManager(self._new_session, max_sessions=max_sessions)
        self.closed = False

    @property
    def backend(self) -> str:
        """The kernel backend executing the blobs (``numpy`` | ``cupy``)."""
        return self.device.backend

    def capabilities(self) -> DeviceCapabilities:
        """What the device reports: its hardware features and limits (sync, no side effect)."""
        return self.device.capabilities()

    def operator_modules(self) -> ModuleRegistry:
        """The operator modules the device selects its kernel implementations from."""
        return self.device.operators.modules

    def selected_operator(self, kernel: str) -> Descriptor:
        """The descriptor of the implementation the device runs for ``kernel`` (a kernel ABI
        name, ``"GEMM"``), selected on first use and kept (sync). InvalidRequestError for an
        unknown kernel; DeviceRefusedError (cause: the KMD's UnsupportedOperatorError naming the
        missing features) when no installed module runs it on this device."""
        kid = KernelId.__members__.get(kernel)
        if kid is None:
            known = ", ".join(KernelId.__members__)
            raise InvalidRequestError(f"no kernel {kernel!r}; known: {known}", field="kernel")
        with kmd_call("select_operator"):
            return self.device.operators.selection(kid).descriptor

    def _new_session(self, key: int, keepalive_timeout_s: float | None) -> UmdSession:
        session = UmdSession(key, self.device, self.pipeline, self.cache, keepalive_timeout_s)
        # a session closed by its owner leaves the registry (else it counts against the limit)
        session.on_close.append(lambda: self.sessions.forget(key))
        return session

    def create_session(self, keepalive_timeout_s: float | None = None) -> UmdSession:
        """A new session (its own KMD context); expires after ``keepalive_timeout_s`` idle."""
        if self.closed:
            raise ClosedError("the Umd is closed")
        return self.sessions.create(keepalive_timeout_s)

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        self.sessions.close()
        if self._owns_device:
            self.device.close()

    def __enter__(self) -> Umd:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
