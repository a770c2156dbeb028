"""Hostile input to ``refstack pipeline check|run`` and ``refstack tune``: one line, exit 2.

Each case gives the command one malformed thing — a missing or malformed config, a weight file
that is not the declared ``.npy``, a wrong ``--input NAME=FILE.npy``, an unknown kernel or
backend, a bad thread count, an output folder or tuning database that cannot be written, a
corrupted tuning database — and asserts exit status 2, exactly one line on stderr (``error:``
and the phrase naming what is wrong), no traceback, and that nothing was tuned or written.
The config is ``examples/pipelines/residual_block.yaml`` and variants of it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from stack.cli import app

EXAMPLE = Path(__file__).parents[2] / "examples" / "pipelines" / "residual_block.yaml"
X_SHAPE = (1, 3, 16, 16)


def _variant(d: Path, name: str, **w3: object) -> None:
    doc = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    doc["inputs"]["w3"].update(w3)
    (d / name).write_text(yaml.safe_dump(doc), encoding="utf-8")


@pytest.fixture(scope="module")
def d(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with the example (weights beside it), its variants and hostile files."""
    d = tmp_path_factory.mktemp("hostile")
    for name in ("residual_block.yaml", "w3.npy", "w1.npy"):
        shutil.copy(EXAMPLE.with_name(name), d / name)
    np.save(d / "x.npy", np.zeros(X_SHAPE, np.float32))
    np.save(d / "x_i32.npy", np.zeros(X_SHAPE, np.int32))
    np.save(d / "x_2x2.npy", np.zeros((2, 2), np.float32))
    (d / "not.npy").write_bytes(b"not an npy file")
    (d / "bad.yaml").write_text("schema: [unclosed\n  - :", encoding="utf-8")
    (d / "bad.json").write_text('{"schema": ', encoding="utf-8")
    (d / "empty.yaml").write_text("", encoding="utf-8")
    (d / "list.yaml").write_text("- 1\n- 2\n", encoding="utf-8")
    (d / "corrupt_db.json").write_text('{"schema": "refstack.tuning-db/1", "entr', "utf-8")
    (d / "list_db.json").write_text("[1, 2, 3]", encoding="utf-8")
    doc = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    doc["pipeline"][1]["operator"] = "no_such_op"
    (d / "unknown_op.yaml").write_text(yaml.safe_dump(doc), encoding="utf-8")
    _variant(d, "weight_missing.yaml", file="missing.npy")
    _variant(d, "weight_not_npy.yaml", file="not.npy")
    _variant(d, "weight_wrong_shape.yaml", file="x.npy")
    _variant(d, "weight_wrong_dtype.yaml", file="x_i32.npy", shape=list(X_SHAPE))
    return d


CFG = "{d}/residual_block.yaml"
RUN = ("pipeline", "run", CFG, "--output-dir", "{d}/out")
X = ("--input", "x={d}/x.npy")
TUNE = ("tune", "GEMM", "--shape", "8x8", "--shape", "8x8", "--iters", "2", "--warmup", "0")
DB = ("--db", "{d}/db.json")

CASES: dict[str, tuple[tuple[str, ...], str]] = {
    # pipeline check: the config file and what it names
    "check-missing-config": (("pipeline", "check", "{d}/nope.yaml"), "No such file or directory"),
    "check-config-is-a-folder": (("pipeline", "check", "{d}"), "Is a directory"),
    "check-malformed-yaml": (("pipeline", "check", "{d}/bad.yaml"), "(file): not valid YAML"),
    "check-malformed-json": (("pipeline", "check", "{d}/bad.json"), "(file): not valid JSON"),
    "check-empty-yaml": (("pipeline", "check", "{d}/empty.yaml"), "(root): None is not of type"),
    "check-yaml-list": (("pipeline", "check", "{d}/list.yaml"), "(root): [1, 2] is not of type"),
    "check-unknown-operator": (
        ("pipeline", "check", "{d}/unknown_op.yaml"),
        "pipeline[1].operator: no operator descriptor 'no_such_op'; known: add,",
    ),
    "check-weight-file-missing": (
        ("pipeline", "check", "{d}/weight_missing.yaml"),
        "inputs.w3.file: cannot read",
    ),
    "check-weight-file-not-npy": (
        ("pipeline", "check", "{d}/weight_not_npy.yaml"),
        "inputs.w3.file: cannot read",
    ),
    "check-weight-file-wrong-shape": (
        ("pipeline", "check", "{d}/weight_wrong_shape.yaml"),
        "inputs.w3.file: holds [1, 3, 16, 16] float32, the config declares [8, 3, 3, 3] float32",
    ),
    "check-weight-file-wrong-dtype": (
        ("pipeline", "check", "{d}/weight_wrong_dtype.yaml"),
        "inputs.w3.file: holds [1, 3, 16, 16] int32, the config declares [1, 3, 16, 16] float32",
    ),
    "check-unknown-backend": (
        ("pipeline", "check", CFG, "--backend", "nosuch"),
        "unknown backend 'nosuch'; known: numpy, cupy",
    ),
    # pipeline run: --input NAME=FILE.npy, the output folder, the timeout
    "run-no-input": (RUN, "missing input 'x'"),
    "run-input-without-file": ((*RUN, "--input", "x"), "--input 'x' is not NAME=FILE.npy"),
    "run-input-without-name": ((*RUN, "--input", "={d}/x.npy"), "is not NAME=FILE.npy"),
    "run-input-unknown-name": ((*RUN, "--input", "y={d}/x.npy"), "unknown input 'y'; inputs: x"),
    "run-input-twice": ((*RUN, *X, *X), "input 'x' given twice"),
    "run-input-file-missing": ((*RUN, "--input", "x={d}/nope.npy"), "cannot read input 'x'"),
    "run-input-not-npy": ((*RUN, "--input", "x={d}/not.npy"), "cannot read input 'x'"),
    "run-input-wrong-dtype": (
        (*RUN, "--input", "x={d}/x_i32.npy"),
        "input 'x' is [1, 3, 16, 16] int32, the pipeline takes [1, 3, 16, 16] float32",
    ),
    "run-input-wrong-shape": (
        (*RUN, "--input", "x={d}/x_2x2.npy"),
        "input 'x' is [2, 2] float32, the pipeline takes [1, 3, 16, 16] float32",
    ),
    "run-weight-file-missing": (
        ("pipeline", "run", "{d}/weight_missing.yaml", *X, "--output-dir", "{d}/out"),
        "inputs.w3.file: cannot read",
    ),
    "run-output-dir-is-a-file": (
        ("pipeline", "run", CFG, *X, "--output-dir", "{d}/x.npy"),
        "cannot write outputs to",
    ),
    "run-output-dir-under-a-file": (
        ("pipeline", "run", CFG, *X, "--output-dir", "{d}/x.npy/out"),
        "cannot write outputs to",
    ),
    "run-timeout-zero": ((*RUN, *X, "--timeout", "0"), "Invalid value for '--timeout'"),
    # tune: kernel, shapes, threads, backend, tuning database
    "tune-unknown-kernel": (
        ("tune", "NOSUCH", *DB),
        "cannot tune 'NOSUCH'; tunable kernels: GEMM, MATMUL, CONV2D",
    ),
    "tune-kernel-not-tunable": (("tune", "RELU", *DB), "cannot tune 'RELU'"),
    "tune-shape-zero": (("tune", "GEMM", "--shape", "0x8", *DB), "every dimension must be"),
    "tune-shape-not-a-shape": (("tune", "GEMM", "--shape", "axb", *DB), "is not a shape like"),
    "tune-one-shape-for-two-inputs": (
        ("tune", "GEMM", "--shape", "8x8", *DB),
        "GEMM takes 2 input shapes (2-D and 2-D), got [(8, 8)]",
    ),
    "tune-threads-zero": ((*TUNE, *DB, "--threads", "0"), "Invalid value for '--threads'"),
    "tune-threads-negative": ((*TUNE, *DB, "--threads", "-3"), "Invalid value for '--threads'"),
    "tune-threads-huge": ((*TUNE, *DB, "--threads", "100000"), "Invalid value for '--threads'"),
    "tune-threads-not-a-number": ((*TUNE, *DB, "--threads", "x"), "Invalid value for '--threads'"),
    "tune-unknown-backend": ((*TUNE, *DB, "--backend", "nosuch"), "unknown backend 'nosuch'"),
    "tune-db-corrupted-json": (
        (*TUNE, "--db", "{d}/corrupt_db.json"),
        "unreadable tuning database",
    ),
    "tune-db-not-a-tuning-db": (
        (*TUNE, "--db", "{d}/list_db.json"),
        "not a tuning database (refstack.tuning-db/1)",
    ),
    "tune-db-is-a-folder": ((*TUNE, "--db", "{d}"), "Invalid value for '--db'"),
    "tune-db-under-a-file": (
        (*TUNE, "--db", "{d}/x.npy/db.json"),
        "Invalid value for '--db': cannot write the tuning database there",
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_hostile_input_is_one_line_and_exit_2(d: Path, case: str) -> None:
    argv, phrase = CASES[case]
    before = sorted(p.name for p in d.iterdir())
    result = CliRunner().invoke(app, [a.format(d=d) for a in argv])
    lines = result.stderr.splitlines()
    assert result.exit_code == 2, (result.exit_code, result.stderr, result.stdout)
    assert "Traceback" not in result.stderr + result.stdout
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    assert phrase in lines[0], lines[0]
    assert sorted(p.name for p in d.iterdir()) == before  # nothing written, no database made


def test_a_refusal_with_json_names_its_type_on_stdout(d: Path) -> None:
    result = CliRunner().invoke(
        app, ["pipeline", "check", str(d / "weight_missing.yaml"), "--json"]
    )
    assert result.exit_code == 2
    body = json.loads(result.stdout)
    assert (body["error"], body["field"]) == ("PipelineConfigError", "inputs.w3.file")


def test_the_example_itself_runs(d: Path) -> None:
    out = d / "ok"
    result = CliRunner().invoke(
        app, ["pipeline", "run", str(d / "residual_block.yaml"), "--input",
              f"x={d / 'x.npy'}", "--output-dir", str(out)],
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["y.npy"]
    shutil.rmtree(out)
