"""``refstack bench umd-remote``: a model's inference through the gRPC UMD against in process.

For each model (the built-in small CNN and ResNet-50 by default), the same Executable is loaded
twice — once on an in-process UMD, once on a UMD service in a child process (its own GIL,
NumPy backend, loopback) — and timed in rotation with the service's Echo (the gRPC floor of one
call: a channel with the runtime's options, carrying as many bytes as the model's inputs, which
a run's request carries too), after a warm-up. Figures are medians in milliseconds;
``remote_over_floor_plus_local`` is remote / (echo + in process), measured in this run.
Goal: ≤ 1.3 for the small CNN.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from typing import Any

import typer

from stack.cli._common import emit_json, fail, progress
from stack.errors import StackError

GOAL = 1.3


def register(app: typer.Typer) -> None:
    app.command("umd-remote")(bench_umd_remote)


def _rotate(fns: dict[str, Callable[[], Any]], runs: int) -> dict[str, float]:
    times: dict[str, list[float]] = {k: [] for k in fns}
    for _ in range(runs):
        for key, fn in fns.items():
            start = time.perf_counter()
            fn()
            times[key].append((time.perf_counter() - start) * 1e3)
    return {k: round(statistics.median(v), 3) for k, v in times.items()}


def measure(name: str, target: str, runs: int) -> dict[str, Any]:
    """The three figures (echo, in process, remote) of model ``name`` against ``target``."""
    from stack.adapter import import_model
    from stack.adapter.zoo import BUILTIN, random_inputs
    from stack.compiler import compile_graph
    from stack.runtime import Runtime
    from stack.umd.service.client import UmdClient
    from stack.umd.service.remote import DEFAULT_POLICY

    model = BUILTIN[name]()
    exe = compile_graph(import_model(model)).executable
    feeds = random_inputs(model, 0)
    payload = bytes(sum(a.nbytes for a in feeds.values()))
    with (
        Runtime("numpy") as local_rt,
        Runtime(umd=target) as remote_rt,
        UmdClient(target, policy=DEFAULT_POLICY, recover=False, journal=False) as echo,
    ):
        local, remote = local_rt.load(exe), remote_rt.load(exe)
        fns: dict[str, Callable[[], Any]] = {
            "grpc_echo_ms": lambda: echo.echo(payload),
            "in_process_ms": lambda: local.run(feeds),
            "remote_ms": lambda: remote.run(feeds),
        }
        _rotate(fns, max(1, runs // 5))  # warm-up: channels, caches, allocator
        figures: dict[str, Any] = {
            "model": name, "ops": len(exe.ops), "echo_bytes": len(payload), **_rotate(fns, runs)
        }  # fmt: skip
    floor = figures["grpc_echo_ms"] + figures["in_process_ms"]
    figures["overhead_ms"] = round(figures["remote_ms"] - figures["in_process_ms"], 3)
    figures["remote_over_floor_plus_local"] = round(figures["remote_ms"] / floor, 3)
    return figures


def bench_umd_remote(
    models: list[str] = typer.Option(
        ["cnn", "resnet50"], "--model", help="Built-in model (repeat the option for several)."
    ),
    runs: int = typer.Option(20, "--runs", min=1, max=100_000, help="Timed runs per figure."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
) -> None:
    """Per-inference overhead of the gRPC UMD against the in-process UMD (child-process server).

    Prints, per model, the Echo floor, the in-process and the remote inference time (medians,
    ms) and remote / (echo + in process); goal for the small CNN: <= 1.3.
    """
    from stack.adapter.zoo import BUILTIN
    from stack.umd.service.serve import child_server

    unknown = [m for m in models if m not in BUILTIN]
    if unknown:
        fail(f"unknown model {unknown[0]!r}; known: {', '.join(sorted(BUILTIN))}", as_json=as_json)
    try:
        with child_server("--backend", "numpy") as target:
            rows = []
            for m in models:
                with progress(f"measuring {m} in process and over gRPC"):
                    rows.append(measure(m, target, runs if m != "resnet50" else max(1, runs // 4)))
    except StackError as err:
        fail(err, as_json=as_json)
    report = {"models": rows, "goal_small_cnn_ratio_max": GOAL}
    if as_json:
        emit_json(report)
        return
    for row in rows:
        typer.echo(
            f"{row['model']:<10} echo {row['grpc_echo_ms']:.3f} ms  in-process "
            f"{row['in_process_ms']:.3f} ms  remote {row['remote_ms']:.3f} ms  "
            f"remote/(echo+in-process) {row['remote_over_floor_plus_local']:.3f}"
        )
    typer.echo(f"goal: small CNN remote/(echo+in-process) <= {GOAL}")
