"""``refstack bench model``: a model through the stack and onnxruntime: time, error, memory plan.

Both run the same inputs in the same process, after a warm-up, taking turns in blocks of a few
runs (:data:`BLOCK`: a change in a shared machine's load hits both), with the same number of
threads (``--threads``: onnxruntime's intra-op threads, the stack's ``$REFSTACK_THREADS``);
figures are medians, and the comparisons are ratios measured in this run (never fixed
thresholds). ``blas_core`` names the CPU core OpenBLAS runs the stack's GEMMs for
(``Haswell``: AVX2; ``SkylakeX``: AVX-512): the ratios of GEMM-bound models depend on it.
``fixed_run_us`` is the median time of one run of a one-op model (the per-run cost that does
not depend on the model), beside onnxruntime's, and ``fixed_run_over_onnxruntime`` their ratio
in this run (the machine's speed moves both: on a shared 2-vCPU VM the stack's figure ranged
12.7-24.9 us over one 90-minute session while the ratio stayed 1.70-1.94). ``*_ms_p90`` say
how far the machine's noise reaches. ``handoff_us`` (more than one thread) is the median cost
of handing an empty tile to the KMD's other worker threads and waiting for them, which a tiled
launch pays once per pass it splits: 73-257 us over several runs on a 2-vCPU AMD EPYC VM while
the pool was a ``ThreadPoolExecutor`` (a blocking ping-pong between two Python threads took
236 us), 44-70 us with its own lock hand-off where the executor took 60-103 us in the same
process, against launches of 0.1-5 ms; it bounds how well small launches scale on such a
machine.
"""

from __future__ import annotations

import math
import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import typer

from stack.cli._common import emit_json, fail, progress
from stack.errors import StackError

#: The stack's thread count, read by the KMD when a device opens.
THREADS_ENV = "REFSTACK_THREADS"


def register(app: typer.Typer) -> None:
    app.command("model")(bench_model)


#: Most runs of one engine in a row: the engines take turns in blocks of this many runs (at
#: least one block each of a quarter of the runs), so that a change in a shared machine's load
#: during the measurement weighs on both, while a model's weights stay warm within a block.
BLOCK = 5


@dataclass(frozen=True, slots=True)
class Timing:
    """One engine's runs, in milliseconds."""

    wall: float  # median wall-clock
    cpu: float  # median process CPU time (all threads)
    wall_p90: float  # 90th percentile wall-clock (nearest rank): how far the noise reaches


def _p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(0.9 * len(ordered)) - 1)]


def _medians_ms(fns: list[Callable[[], Any]], runs: int) -> list[Timing]:
    """The :class:`Timing` of each of ``fns``, ``runs`` times each, the functions taking turns
    in blocks (:data:`BLOCK`). CPU time sums all threads, so an engine's busy-waiting worker
    threads count against it."""
    wall: list[list[float]] = [[] for _ in fns]
    cpu: list[list[float]] = [[] for _ in fns]
    block = max(1, min(BLOCK, runs // 4))
    done = 0
    while done < runs:
        count = min(block, runs - done)
        for fn, walls, cpus in zip(fns, wall, cpu, strict=True):
            for _ in range(count):
                start, start_cpu = time.perf_counter(), time.process_time()
                fn()
                cpus.append((time.process_time() - start_cpu) * 1e3)
                walls.append((time.perf_counter() - start) * 1e3)
        done += count
    return [
        Timing(statistics.median(w), statistics.median(c), _p90(w))
        for w, c in zip(wall, cpu, strict=True)
    ]


def _nothing() -> None:
    """An empty tile."""


def handoff_us(threads: int, runs: int = 2000) -> float | None:
    """Median µs of handing an empty tile to each of the KMD's other ``threads - 1`` worker
    threads and waiting for them (:class:`stack.kmd.kernels.parallel.WorkerPool`): what a tiled
    launch pays on this machine once per pass it splits; None for one thread."""
    if threads < 2:
        return None
    from stack.kmd.kernels.parallel import WorkerPool

    pool = WorkerPool(threads)
    parts = [_nothing] * threads
    times = []
    try:
        for _ in range(100):
            pool.run(parts)
        for _ in range(runs):
            start = time.perf_counter()
            pool.run(parts)
            times.append(time.perf_counter() - start)
    finally:
        pool.close()
    return round(statistics.median(times) * 1e6, 2)


def one_op_model() -> Any:
    """The smallest model: one Relu on a [1, 16] input (its run time is the fixed cost)."""
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])
    graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"])], "one_op", [x], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def _session(model_proto: Any, threads: int) -> Any:
    """An onnxruntime CPU session with ``threads`` intra-op threads and no spinning workers
    (both engines share this process: a spinning worker would be charged to the stack)."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.log_severity_level = 3
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(
        model_proto.SerializeToString(), options, providers=["CPUExecutionProvider"]
    )


def fixed_cost(*, threads: int, runs: int = 2000) -> dict[str, float]:
    """Median µs of one run of :func:`one_op_model` on the stack and on onnxruntime."""
    from stack.adapter import import_model
    from stack.compiler import CompiledModel

    proto = one_op_model()
    feeds = {"x": np.ones((1, 16), np.float32)}
    session = _session(proto, threads)
    with CompiledModel(import_model(proto)) as compiled:
        for _ in range(50):
            compiled.run(feeds)
            session.run(None, feeds)
        stack, ort = _medians_ms(
            [lambda: compiled.run(feeds), lambda: session.run(None, feeds)], runs
        )
    return {
        "fixed_run_us": round(stack.wall * 1e3, 2),
        "onnxruntime_fixed_run_us": round(ort.wall * 1e3, 2),
        "fixed_run_over_onnxruntime": round(stack.wall / ort.wall, 3),
    }


def measure(
    model_proto: Any, *, runs: int, streams: int, seed: int = 0, int8: int = 0, threads: int = 1
) -> dict[str, Any]:
    """Run ``model_proto`` on the stack and on onnxruntime; return the figures.

    ``int8``: quantize, calibrating on that many seeded random inputs (distinct from the
    measured input); onnxruntime still runs the float model, so ``max_abs_err`` is the
    quantization error.
    """
    from stack.adapter import import_model
    from stack.adapter.zoo import random_inputs
    from stack.compiler import CompiledModel, CompileOptions, QuantizeOptions
    from stack.kmd.kernels import blas

    feeds = random_inputs(model_proto, seed)
    session = _session(model_proto, threads)
    start = time.perf_counter()
    quantize = None
    if int8:
        samples = tuple(random_inputs(model_proto, seed + 1 + i) for i in range(int8))
        quantize = QuantizeOptions(calibration=samples)
    options_c = CompileOptions(streams=streams, quantize=quantize)
    compiled = CompiledModel(import_model(model_proto), options_c)
    compile_load_ms = (time.perf_counter() - start) * 1e3
    try:
        ours = compiled.run(feeds)
        ref = dict(
            zip([o.name for o in session.get_outputs()], session.run(None, feeds), strict=True)
        )
        err = max(float(np.max(np.abs(ours[k] - ref[k]))) for k in ref)
        for _ in range(3):
            compiled.run(feeds)
            session.run(None, feeds)
        stack, ort = _medians_ms(
            [lambda: compiled.run(feeds), lambda: session.run(None, feeds)], runs
        )
        figures = compiled.result.memory_figures()
    finally:
        compiled.close()
    return {
        "model": model_proto.graph.name,
        "inputs": {k: list(v.shape) for k, v in feeds.items()},
        "ops": len(compiled.executable.ops),
        "streams": streams,
        "threads": threads,
        "blas_core": blas.core(),
        "int8": bool(int8),
        "runs": runs,
        "compile_load_ms": round(compile_load_ms, 3),
        "stack_ms_p50": round(stack.wall, 4),
        "onnxruntime_ms_p50": round(ort.wall, 4),
        "time_ratio": round(stack.wall / ort.wall, 3),
        "stack_ms_p90": round(stack.wall_p90, 4),
        "onnxruntime_ms_p90": round(ort.wall_p90, 4),
        "stack_cpu_ms_p50": round(stack.cpu, 4),
        "onnxruntime_cpu_ms_p50": round(ort.cpu, 4),
        "cpu_time_ratio": round(stack.cpu / max(ort.cpu, 1e-9), 3),
        "max_abs_err": err,
        "naive_bytes": figures["naive_bytes"],
        "arena_bytes": figures["arena_bytes"],
        "lower_bound_bytes": figures["lower_bound_bytes"],
        "const_bytes": figures["const_bytes"],
        "arena_over_naive": round(figures["arena_bytes"] / max(1, figures["naive_bytes"]), 4),
        "arena_over_lower_bound": round(
            figures["arena_bytes"] / max(1, figures["lower_bound_bytes"]), 4
        ),
    }


def _params(spec: str) -> dict[str, int]:
    """``"size=64,width=32"`` -> {"size": 64, "width": 32} (built-in model parameters)."""
    out: dict[str, int] = {}
    for item in filter(None, spec.split(",")):
        key, _, value = item.partition("=")
        if not value.lstrip("-").isdigit():
            raise typer.BadParameter(f"expected KEY=INT, got {item!r}")
        out[key] = int(value)
    return out


def bench_model(
    model: str = typer.Argument(
        ..., help="An ONNX model file, or a built-in: cnn, mlp, transformer, resnet50."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    runs: int = typer.Option(50, "--runs", min=1, max=1_000_000, help="Timed runs per engine."),
    streams: int = typer.Option(
        1, "--streams", min=1, max=64, help="Stream lanes for the compiled model."
    ),
    int8: int = typer.Option(
        0, "--int8", min=0, max=10_000, help="Quantize to int8 with N calibration samples."
    ),
    threads: int = typer.Option(
        1,
        "--threads",
        min=1,
        max=256,
        help="Threads of each engine (the stack's $REFSTACK_THREADS).",
    ),
) -> None:
    """A model through the stack and onnxruntime: time, error, memory plan."""
    import onnx

    from stack.adapter import load_model
    from stack.adapter.zoo import BUILTIN

    try:
        name, _, params = model.partition(":")
        proto = BUILTIN[name](**_params(params)) if name in BUILTIN else load_model(Path(model))
        os.environ[THREADS_ENV] = str(threads)
        with progress(f"benchmarking {model}"):
            figures = measure(proto, runs=runs, streams=streams, int8=int8, threads=threads)
        figures.update(fixed_cost(threads=threads))
        figures["handoff_us"] = handoff_us(threads)
    except StackError as err:
        fail(err, as_json=as_json)
    except (OSError, onnx.checker.ValidationError) as err:
        fail(str(err), as_json=as_json)
    if as_json:
        emit_json(figures)
        return
    for key, value in figures.items():
        sys.stdout.write(f"{key:24s} {value}\n")
