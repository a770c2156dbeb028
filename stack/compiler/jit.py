"""Compile-and-run: an IR graph compiled to an Executable and loaded on a :class:`Runtime`.

This is the compiler's upward API for callers that want numbers, not files (the ONNX backend,
``refstack bench model``, the whole-model tests): ``CompiledModel(graph).run(inputs)``.
"""

from __future__ import annotations

import atexit
import threading
from collections.abc import Mapping
from dataclasses import replace

import numpy as np

from stack.compiler.driver import CompileResult, compile_graph
from stack.compiler.ir import Graph
from stack.compiler.options import CompileOptions, Target
from stack.runtime import Executable, LoadedModel, Runtime

_SHARED: dict[int, Runtime] = {}
_SHARED_LOCK = threading.Lock()


def shared_runtime(streams: int = 2) -> Runtime:
    """A process-wide Runtime (one UMD, one device) reused by many models; closed at exit."""
    with _SHARED_LOCK:
        runtime = _SHARED.get(streams)
        if runtime is None:
            runtime = _SHARED[streams] = Runtime(streams=streams)
            atexit.register(runtime.close)
        return runtime


class CompiledModel:
    """A graph compiled and made resident on a runtime.

    Contract: construction is synchronous — compile (pure; for the runtime's device when
    ``options.target`` is None), then ``Runtime.load`` (uploads constants, translates every
    op) — and raises CompilerError subclasses or the runtime's ModelLoadError. :meth:`run`
    blocks until the outputs are read back (the runtime waits on the fences); it raises the
    runtime's ModelInputError / ExecutionFaultError. The model owns its device memory until
    :meth:`close`; the runtime is closed with it only if the model created it. Not
    re-entrant: one ``run`` at a time per model (the runtime serialises).
    """

    def __init__(
        self,
        graph: Graph,
        options: CompileOptions | None = None,
        *,
        runtime: Runtime | None = None,
    ) -> None:
        options = options or CompileOptions()
        self._own_runtime = runtime is None
        self.runtime = runtime or Runtime(streams=max(1, options.streams))
        try:
            if options.target is None:  # compiled for the device it is loaded on
                options = replace(options, target=Target.for_backend(self.runtime.umd.backend))
            self.options = options
            self.result: CompileResult = compile_graph(graph, self.options)
            self.model: LoadedModel = self.runtime.load(self.result.executable)
        except BaseException:
            if self._own_runtime:
                self.runtime.close()
            raise

    @property
    def executable(self) -> Executable:
        return self.result.executable

    @property
    def input_names(self) -> tuple[str, ...]:
        return self.result.graph.inputs

    @property
    def output_names(self) -> tuple[str, ...]:
        return self.result.graph.outputs

    def run(
        self, inputs: Mapping[str, np.ndarray], timeout_s: float = 60.0
    ) -> dict[str, np.ndarray]:
        """One inference: ``{input name: array}`` -> ``{output name: array}`` (blocking)."""
        return self.model.run(inputs, timeout_s=timeout_s)

    def close(self) -> None:
        """Free the model's device memory (and the runtime, when this model created it)."""
        self.model.close()
        if self._own_runtime:
            self.runtime.close()

    def __enter__(self) -> CompiledModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
