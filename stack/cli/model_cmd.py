"""``refstack compile`` and ``refstack conformance``: models through the whole stack."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import typer

from stack.cli._common import emit_json, fail
from stack.errors import StackError


def register(app: typer.Typer) -> None:
    app.command("compile")(compile_model)
    app.command("conformance")(conformance)


def parse_shapes(specs: list[str]) -> dict[str, tuple[int, ...]]:
    """``NAME=1,3,224,224`` options -> {name: shape}."""
    shapes: dict[str, tuple[int, ...]] = {}
    for spec in specs:
        name, _, dims = spec.partition("=")
        if not name or not dims:
            raise typer.BadParameter(f"expected NAME=D1,D2,..., got {spec!r}")
        shapes[name] = tuple(int(d) for d in dims.split(","))
    return shapes


def random_samples(graph: Any, count: int) -> tuple[dict[str, np.ndarray], ...]:
    """``count`` seeded standard-normal inputs (a stand-in for real calibration data)."""
    rng = np.random.default_rng(0)
    return tuple(
        {
            n: rng.standard_normal(graph.types[n].shape).astype(graph.types[n].dtype.numpy)
            for n in graph.inputs
        }
        for _ in range(count)
    )


def compile_model(
    model: Path = typer.Argument(..., help="An ONNX model file."),
    output: Path = typer.Option(..., "-o", "--output", help="Where to write the Executable."),
    input_shape: list[str] = typer.Option(
        [], "--input-shape", help="NAME=D1,D2,... for inputs with dynamic dims."
    ),
    streams: int = typer.Option(1, "--streams", help="Stream lanes to schedule ops on."),
    int8: int = typer.Option(
        0, "--int8", help="Quantize to int8, calibrating on this many seeded random-normal samples."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON summary."),
) -> None:
    """Compile an ONNX model into an Executable (.sx)."""
    from stack.adapter import import_model
    from stack.compiler import CompileOptions, QuantizeOptions, compile_graph

    try:
        graph = import_model(model, input_shapes=parse_shapes(input_shape))
        quantize = QuantizeOptions(calibration=random_samples(graph, int8)) if int8 else None
        result = compile_graph(graph, CompileOptions(streams=streams, quantize=quantize))
        data = result.executable.to_bytes()
    except StackError as err:
        fail(err, as_json=as_json)
    output.write_bytes(data)
    summary = {
        "executable": str(output),
        "bytes": len(data),
        "ops": len(result.executable.ops),
        "tensors": len(result.executable.tensors),
        "streams": streams,
        "int8": bool(int8),
        "op_counts": result.graph.op_counts(),
        **result.memory_figures(),
    }
    if as_json:
        emit_json(summary)
    else:
        typer.echo(
            f"{output}: {summary['ops']} ops, {summary['tensors']} tensors, "
            f"arena {summary['arena_bytes']} B (naive {summary['naive_bytes']} B, "
            f"lower bound {summary['lower_bound_bytes']} B), consts {summary['const_bytes']} B"
        )


def conformance(
    as_json: bool = typer.Option(False, "--json", help="Print JSON."),
    pattern: str = typer.Option(None, "--filter", help="Only cases whose name matches (regex)."),
) -> None:
    """Run every ONNX backend node test of the installed onnx against the stack."""
    from stack.adapter.conformance import render_text, run_conformance, stderr_progress

    report = run_conformance(pattern, progress=stderr_progress)
    if as_json:
        emit_json(report.to_dict())
    else:
        sys.stdout.write(render_text(report))
