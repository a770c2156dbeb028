"""``refstack run``: inputs from .npy files, outputs to DIR/<name>.npy, typed errors exit 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from typer.testing import CliRunner

from stack.cli import app
from stack.cli.run_cmd import safe_file_name


@pytest.fixture
def model_file(branch_model: Any, tmp_path: Path) -> tuple[Path, Path, np.ndarray]:
    exe, inputs, expected = branch_model
    sx = tmp_path / "branches.sx"
    sx.write_bytes(exe.to_bytes())
    a = tmp_path / "a.npy"
    np.save(a, inputs["a"])
    return sx, a, expected["out/sum:0"]


def test_run_writes_outputs_and_summary(model_file: Any, tmp_path: Path) -> None:
    sx, a, expected = model_file
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app, ["run", str(sx), "--input", f"a={a}", "--output-dir", str(out), "--json"]
    )
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["outputs"] == [
        {
            "name": "out/sum:0",
            "shape": [4, 8],
            "dtype": "float32",
            "file": str(out / "out_sum_0.npy"),
        }
    ]
    assert summary["attempts"] == 1 and summary["ops"] == 5
    np.testing.assert_allclose(np.load(out / "out_sum_0.npy"), expected, rtol=1e-4, atol=1e-4)
    human = CliRunner().invoke(
        app, ["run", str(sx), "--input", f"a={a}", "--output-dir", str(out), "--repeat", "3"]
    )
    assert human.exit_code == 0 and "out/sum:0\t4x8\tfloat32" in human.stdout
    assert "median of 3" in human.stdout


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--input", "b=A"], "unknown input 'b'"),
        ([], "missing input 'a'"),
        (["--input", "a=/no/such.npy"], "cannot read input 'a'"),
        (["--input", "a"], "is not NAME=FILE.npy"),
        (["--input", "a=WRONG"], "has shape (3,)"),
        (["--input", "a=INT"], "has dtype int64"),
        (["--input", "a=A", "--input", "a=A"], "given twice"),
    ],
)
def test_input_errors_exit_2(model_file: Any, tmp_path: Path, args: list[str], needle: str) -> None:
    sx, a, _ = model_file
    wrong = tmp_path / "wrong.npy"
    np.save(wrong, np.zeros(3, np.float32))
    ints = tmp_path / "ints.npy"
    np.save(ints, np.zeros((4, 8), np.int64))
    argv = [
        x.replace("WRONG", str(wrong)).replace("INT", str(ints)).replace("=A", f"={a}")
        for x in args
    ]
    result = CliRunner().invoke(app, ["run", str(sx), *argv, "--output-dir", str(tmp_path)])
    assert result.exit_code == 2
    assert needle in result.stderr


def test_corrupt_executable_exits_2(tmp_path: Path) -> None:
    sx = tmp_path / "bad.sx"
    sx.write_bytes(b"not an executable at all, but long enough for a header" * 2)
    result = CliRunner().invoke(app, ["run", str(sx), "--json"])
    assert result.exit_code == 2
    assert json.loads(result.stdout)["field"] == "magic"


def test_safe_file_names_are_unique() -> None:
    taken: set[str] = set()
    assert safe_file_name("out/sum:0", taken) == "out_sum_0"
    assert safe_file_name("out:sum/0", taken) == "out_sum_0_2"
    assert safe_file_name("../..", taken) == "output"
