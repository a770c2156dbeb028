"""``refstack compile`` and ``refstack conformance``: models through the whole stack."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import numpy as np
import typer

from stack.cli._common import emit_json, fail, os_message, progress, refuse_overwrite
from stack.errors import StackError


def register(app: typer.Typer) -> None:
    app.command("compile")(compile_model)
    app.command("conformance")(conformance)


MAX_DIM = 1 << 31


def parse_shapes(specs: list[str]) -> dict[str, tuple[int, ...]]:
    """``NAME=1,3,224,224`` options -> {name: shape}; typer.BadParameter for anything else."""
    shapes: dict[str, tuple[int, ...]] = {}
    for spec in specs:
        name, _, dims = spec.partition("=")
        if not name or not dims:
            raise typer.BadParameter(
                f"expected NAME=D1,D2,..., got {spec!r}", param_hint="--input-shape"
            )
        try:
            shape = tuple(int(d) for d in dims.split(","))
        except ValueError:
            raise typer.BadParameter(
                f"{spec!r}: dims must be integers (NAME=D1,D2,...)", param_hint="--input-shape"
            ) from None
        if any(not 0 < d <= MAX_DIM for d in shape):
            raise typer.BadParameter(
                f"{spec!r}: every dim must be in 1..{MAX_DIM}", param_hint="--input-shape"
            )
        if name in shapes:
            raise typer.BadParameter(f"input {name!r} given twice", param_hint="--input-shape")
        shapes[name] = shape
    return shapes


def load_source(model: str) -> Any:
    """An ONNX file path, or the name of a built-in model (those of ``refstack bench model``)."""
    from stack.adapter.zoo import BUILTIN

    path = Path(model)
    if not path.exists() and model in BUILTIN:
        return BUILTIN[model]()
    if not path.is_file():
        known = ", ".join(sorted(BUILTIN))
        raise typer.BadParameter(
            f"{model}: no such file, and not a built-in model ({known})", param_hint="MODEL"
        )
    return path


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
    model: str = typer.Argument(
        ..., help="An ONNX model file, or a built-in model: cnn, mlp, transformer, resnet50."
    ),
    output: Path = typer.Option(..., "-o", "--output", help="Where to write the Executable."),
    input_shape: list[str] = typer.Option(
        [], "--input-shape", help="NAME=D1,D2,... for inputs with dynamic dims."
    ),
    streams: int = typer.Option(
        1, "--streams", min=1, max=64, help="Stream lanes to schedule ops on."
    ),
    int8: int = typer.Option(
        0,
        "--int8",
        min=0,
        max=10_000,
        help="Quantize to int8, calibrating on this many seeded random-normal samples.",
    ),
    as_json: bool = typer.Option(False, "--json", help="Print a JSON summary."),
) -> None:
    """Compile an ONNX model into an Executable (.sx)."""
    from stack.adapter import import_model
    from stack.compiler import CompileOptions, QuantizeOptions, compile_graph

    shapes = parse_shapes(input_shape)
    source = load_source(model)
    if isinstance(source, Path):
        refuse_overwrite(output, source)
    if not output.parent.is_dir():
        fail(f"cannot write {output}: folder {output.parent} does not exist", as_json=as_json)
    try:
        with progress(f"compiling {model}"):
            graph = import_model(source, input_shapes=shapes)
            quantize = QuantizeOptions(calibration=random_samples(graph, int8)) if int8 else None
            result = compile_graph(graph, CompileOptions(streams=streams, quantize=quantize))
            data = result.executable.to_bytes()
    except StackError as err:
        fail(err, as_json=as_json)
    try:
        output.write_bytes(data)
    except OSError as exc:
        fail(f"cannot write {output}: {os_message(exc)}", as_json=as_json)
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
