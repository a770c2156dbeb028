"""``refstack run``: an Executable through runtime → UMD → KMD."""

from __future__ import annotations

import re
import statistics
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import typer

from stack.cli._common import emit_json, fail, progress
from stack.errors import StackError
from stack.runtime import Runtime
from stack.runtime.errors import ModelInputError
from stack.runtime.loader import read_executable

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def register(app: typer.Typer) -> None:
    app.command("run")(run_model)


def safe_file_name(name: str, taken: set[str]) -> str:
    """``name`` with every run of unsafe characters replaced by ``_``, made unique in ``taken``."""
    base = _UNSAFE.sub("_", name).strip("._") or "output"
    candidate, n = base, 1
    while candidate in taken:
        n += 1
        candidate = f"{base}_{n}"
    taken.add(candidate)
    return candidate


def load_npy(file: str) -> np.ndarray:
    """A ``.npy`` file as an array; ValueError when its header does not match its size.

    Mapped first, so a header claiming more data than the file holds (16 TiB, say) is refused
    by the mapping instead of allocating what it claims.
    """
    mapped = np.load(file, allow_pickle=False, mmap_mode="r")
    if not isinstance(mapped, np.ndarray):
        raise ValueError("not a single array (.npz?)")
    return np.array(mapped)


def save_outputs(
    outputs: Mapping[str, np.ndarray], output_dir: Path, *, as_json: bool
) -> list[dict[str, Any]]:
    """Write each output to ``output_dir/<safe name>.npy``; one record per output (name, shape,
    dtype, file). A write that fails exits 2 with one line."""
    try:
        output_dir.mkdir(parents=True, exist_ok=True)
        taken: set[str] = set()
        records: list[dict[str, Any]] = []
        for name, array in outputs.items():
            path = output_dir / f"{safe_file_name(name, taken)}.npy"
            np.save(path, array)
            records.append(
                {"name": name, "shape": list(array.shape), "dtype": str(array.dtype),
                 "file": str(path)}
            )  # fmt: skip
    except OSError as exc:
        fail(f"cannot write outputs to {output_dir}: {exc.strerror}", as_json=as_json)
    return records


def echo_outputs(records: list[dict[str, Any]]) -> None:
    """One line per written output: name, shape, dtype, file."""
    for rec in records:
        shape = "x".join(str(d) for d in rec["shape"]) or "scalar"
        typer.echo(f"{rec['name']}\t{shape}\t{rec['dtype']}\t{rec['file']}")


def parse_target(target: str) -> str:
    """``HOST:PORT`` of a UMD service, checked (typer.BadParameter otherwise)."""
    host, sep, port = target.rpartition(":")
    if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise typer.BadParameter(f"{target!r} is not HOST:PORT (port 1..65535)", param_hint="--umd")
    return target


def read_inputs(specs: list[str]) -> dict[str, np.ndarray]:
    arrays: dict[str, np.ndarray] = {}
    for spec in specs:
        name, sep, file = spec.partition("=")
        if not sep or not name or not file:
            raise ModelInputError(f"--input {spec!r} is not NAME=FILE.npy", input=name or None)
        if name in arrays:
            raise ModelInputError(f"input {name!r} given twice", input=name)
        try:
            arrays[name] = load_npy(file)
        except (OSError, ValueError) as exc:
            raise ModelInputError(
                f"cannot read input {name!r} from {file}: {exc}", input=name, path=file
            ) from None
    return arrays


def run_model(
    executable: Path = typer.Argument(..., help="An Executable written by `refstack compile`."),
    inputs: list[str] = typer.Option([], "--input", help="NAME=FILE.npy, once per input."),
    output_dir: Path = typer.Option(Path("out"), "--output-dir", help="Where outputs go."),
    backend: str | None = typer.Option(None, "--backend", help="numpy | cupy (default: auto)."),
    umd: str | None = typer.Option(
        None, "--umd", help="HOST:PORT of a `refstack umd serve` to run on (default: in process)."
    ),
    streams: int = typer.Option(2, "--streams", min=1, max=64, help="Device streams per model."),
    timeout_s: float = typer.Option(
        60.0, "--timeout", min=0.001, max=86_400, help="Seconds one run may take."
    ),
    repeat: int = typer.Option(
        1, "--repeat", min=1, max=1_000_000, help="Runs to time (median reported)."
    ),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON."),
) -> None:
    """Run an Executable through runtime → UMD → KMD and write each output as .npy.

    With ``--umd HOST:PORT`` the UMD is a `refstack umd serve` service reached over gRPC (large
    tensors through its shared-memory side channel); otherwise it runs in process.

    Each output goes to DIR/<output name>.npy, the name reduced to file-safe characters.
    """
    target = parse_target(umd) if umd is not None else None
    try:
        arrays = read_inputs(inputs)
        exe = read_executable(executable)
        started = time.perf_counter()
        with Runtime(backend, streams=streams, umd=target) as runtime:
            with progress(f"loading {executable}"):
                model = runtime.load(exe)
            loaded = time.perf_counter()
            run_ms = []
            for _ in range(repeat):
                begin = time.perf_counter()
                outputs = model.run(arrays, timeout_s=timeout_s)
                run_ms.append((time.perf_counter() - begin) * 1e3)
            stats = model.last_stats
            used_backend = runtime.umd.backend
    except StackError as err:
        fail(err, as_json=as_json)
    records = save_outputs(outputs, output_dir, as_json=as_json)
    summary = {
        "executable": str(executable),
        "backend": used_backend,
        "outputs": records,
        "load_ms": round((loaded - started) * 1e3, 3),
        "run_ms": round(statistics.median(run_ms), 3),
        "runs": repeat,
        "attempts": stats.attempts if stats else 1,
        "submits": stats.submits if stats else 0,
        "ops": len(exe.ops),
    }
    if as_json:
        emit_json(summary)
        return
    echo_outputs(records)
    typer.echo(
        f"# {summary['ops']} ops, {summary['submits']} submits, load {summary['load_ms']} ms, "
        f"run {summary['run_ms']} ms (median of {repeat}), attempts {summary['attempts']}, "
        f"backend {used_backend}"
    )
