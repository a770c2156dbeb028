"""The runtime's entry point: owns a UMD and loads Executables into runnable models."""

from __future__ import annotations

import threading
from pathlib import Path

from stack.errors import UmdError
from stack.runtime.errors import ModelClosedError, ModelLoadError
from stack.runtime.executable import Executable
from stack.runtime.executor import LoadedModel
from stack.runtime.loader import build_image, read_executable
from stack.runtime.oppipeline import ConfigSource, PipelineRunner, open_pipeline
from stack.runtime.recovery import DEFAULT_POLICY, RecoveryPolicy
from stack.umd import Umd
from stack.umd.protocol import UmdApi

#: Why a pipeline is refused on a UMD service: what linking and running one uses that the UMD
#: protocol (contracts/umd.proto) does not carry.
REMOTE_PIPELINES = (
    "operator pipelines run on an in-process UMD, not a service: the UMD protocol "
    "(contracts/umd.proto) carries no device capabilities or operator selection (linking), no "
    "shape inference, and no per-stage pool blocks, pool windows or pool statistics (running)"
)


class Runtime:
    """Loads Executables and runs them through the UMD on one device.

    ``backend`` picks the kernel backend ("numpy", "cupy", None = auto); ``streams`` is how
    many device streams each model may use (the Executable's lanes are folded onto them);
    ``recovery`` is the fault policy of every model loaded here. ``umd``: the UMD to run on —
    None (an in-process :class:`Umd` on ``backend``, owned and closed here), ``"HOST:PORT"`` (a
    UMD service, through :class:`~stack.umd.service.remote.RemoteUmd`; ``backend`` is then the
    server's) or any :class:`~stack.umd.protocol.UmdApi` (not closed here).

    Contract: :meth:`load` is synchronous — constants are uploaded and every op translated
    before it returns. Each model gets its own UMD session and owns its memory; :meth:`close`
    closes every model still open, then the UMD. Thread-safe. Errors: ExecutableFormatError
    (malformed Executable), ModelLoadError (unreadable file, device out of memory, op refused
    by the UMD), ModelClosedError (after close).
    """

    def __init__(
        self,
        backend: str | None = None,
        *,
        streams: int = 2,
        recovery: RecoveryPolicy | None = None,
        umd: UmdApi | str | None = None,
    ) -> None:
        if streams < 1:
            raise ValueError("streams must be at least 1")
        self._owns_umd = not isinstance(umd, UmdApi)
        self.umd: UmdApi
        if umd is None:
            self.umd = Umd(backend)
        elif isinstance(umd, str):
            from stack.umd.service.remote import RemoteUmd

            self.umd = RemoteUmd(umd)
        else:
            self.umd = umd
        self.streams = streams
        self.recovery = recovery or DEFAULT_POLICY
        self._models: set[LoadedModel] = set()
        self._lock = threading.Lock()
        self._closed = False

    def load(self, exe: Executable | bytes | Path | str) -> LoadedModel:
        """Validate ``exe`` and make it resident: memory, constants, translated commands."""
        executable = read_executable(exe)
        with self._lock:
            if self._closed:
                raise ModelClosedError("the runtime is closed")
            try:
                session = self.umd.create_session()
            except UmdError as exc:
                raise ModelLoadError(f"cannot open a UMD session: {exc.message}") from exc
        try:
            image = build_image(session, executable, self.streams)
        except BaseException:
            session.close()
            raise
        model = LoadedModel(session, image, self.recovery, on_close=self._forget)
        with self._lock:
            self._models.add(model)
        return model

    def open_pipeline(self, config: ConfigSource) -> PipelineRunner:
        """Validate, link and prepare an operator pipeline config (a path, a mapping or a
        :class:`~stack.runtime.oppipeline.PipelineConfig`) on a new session of this runtime's
        UMD (sync; see :mod:`stack.runtime.oppipeline`). The runner owns the session until
        ``runner.close()`` (or this runtime's close). Errors: PipelineConfigError /
        ShapeMismatchError naming the field, ModelLoadError on a UMD service
        (:data:`REMOTE_PIPELINES` says why), ModelClosedError."""
        with self._lock:
            if self._closed:
                raise ModelClosedError("the runtime is closed")
        if not isinstance(self.umd, Umd):
            raise ModelLoadError(REMOTE_PIPELINES)
        return open_pipeline(config, self.umd)

    def _forget(self, model: LoadedModel) -> None:
        with self._lock:
            self._models.discard(model)

    def close(self) -> None:
        """Close every open model and the UMD (idempotent)."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
            models = list(self._models)
        for model in models:
            model.close()
        if self._owns_umd:
            self.umd.close()

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
