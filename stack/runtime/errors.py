"""The runtime's typed errors: every failure is a :class:`~stack.errors.RuntimeLayerError`.

Each subclass carries the structured fields a caller needs to tell what went wrong without
parsing the message (``field`` of a bad Executable, ``input`` of a bad model input, ``stream``
and ``fault`` of a device fault).
"""

from __future__ import annotations

from typing import Any

from stack.errors import RuntimeLayerError


class ExecutableFormatError(RuntimeLayerError):
    """An Executable is malformed: bad magic, version, checksum, bounds, alignment or records.

    ``field`` names the offending part (``"magic"``, ``"version"``, ``"checksum"``,
    ``"segments.code"``, ``"tensors[3].offset"``, ``"ops[7].deps"`` ...).
    """

    def __init__(self, message: str, *, field: str, **details: Any) -> None:
        super().__init__(message, field=field, **details)
        self.field = field


class ModelInputError(RuntimeLayerError):
    """``LoadedModel.run`` got an unknown, missing, mis-shaped or mis-typed input."""

    def __init__(self, message: str, *, input: str | None = None, **details: Any) -> None:
        super().__init__(message, input=input, **details)
        self.input = input


class ModelLoadError(RuntimeLayerError):
    """Loading failed below the format: the file is unreadable or the device refused memory."""


class ExecutionFaultError(RuntimeLayerError):
    """A run failed on the device and recovery was exhausted (or not allowed).

    Never accompanied by outputs: a faulted run returns nothing. ``stream`` is the runtime
    stream lane whose ticket failed, ``fault`` the UMD/KMD error's name, ``attempts`` how many
    times the inference was tried.
    """

    def __init__(
        self,
        message: str,
        *,
        stream: int | None = None,
        fault: str | None = None,
        attempts: int = 1,
        op: str | None = None,
        **details: Any,
    ) -> None:
        super().__init__(message, op=op, stream=stream, fault=fault, attempts=attempts, **details)
        self.stream = stream
        self.fault = fault
        self.attempts = attempts


class ModelClosedError(RuntimeLayerError):
    """The model (or its runtime) was closed; its device memory is gone."""


class PipelineConfigError(RuntimeLayerError):
    """An operator pipeline config is unreadable or invalid; ``field`` is the JSON path of the
    offending part (``pipeline[1].constraints.memory_alignment``, ``outputs[0]``, ``inputs.x``)."""

    def __init__(self, message: str, *, field: str, **details: Any) -> None:
        super().__init__(message, field=field, **details)
        self.field = field


class ShapeMismatchError(PipelineConfigError):
    """The linker found a tensor whose shape is not what a stage expects (or two tensors a merge
    cannot broadcast): ``produced`` and ``expected`` are both shapes, ``dim`` the first offending
    dimension, ``stage`` and ``tensor`` where."""

    def __init__(
        self,
        message: str,
        *,
        field: str,
        stage: str,
        tensor: str,
        produced: tuple[int, ...],
        expected: tuple[int | None, ...],
        dim: int | None,
    ) -> None:
        super().__init__(
            message, field=field, stage=stage, tensor=tensor, produced=list(produced),
            expected=list(expected), dim=dim,
        )  # fmt: skip
        self.stage, self.tensor, self.dim = stage, tensor, dim
        self.produced, self.expected = produced, expected


class ModuleError(RuntimeLayerError):
    """An operator module failed in a pipeline run: it raised (refused or faulted) or produced
    NaN/Inf where NaN/Inf are forbidden. Names the ``module``, its ``version``, the ``stage``
    and its ``inputs`` (``name: shape dtype``); ``cause`` is the underlying error's name
    (``NanInf`` for the output check). The rest of the process is unaffected."""

    def __init__(
        self,
        message: str,
        *,
        module: str,
        version: str,
        stage: str,
        inputs: tuple[str, ...],
        cause: str,
        op: str | None = None,
    ) -> None:
        super().__init__(
            message, op=op, module=module, version=version, stage=stage, inputs=list(inputs),
            cause=cause,
        )  # fmt: skip
        self.module, self.version, self.stage = module, version, stage
        self.inputs, self.cause = inputs, cause
