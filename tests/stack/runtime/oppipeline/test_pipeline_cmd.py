"""``refstack pipeline check|run``: linking and running configs; bad input is one line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import yaml
from typer.testing import CliRunner

from stack.cli import app
from tests.stack.runtime.oppipeline.configs import BRANCH_MERGE, LINEAR, cfg


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    """BRANCH_MERGE as YAML with its weight k in a .npy next to it, and an input x."""
    doc = cfg(BRANCH_MERGE)
    doc["inputs"]["k"]["file"] = "k.npy"
    np.save(tmp_path / "k.npy", np.arange(4, dtype=np.float32).reshape(4, 1))
    np.save(tmp_path / "x.npy", np.linspace(-1, 1, 24, dtype=np.float32).reshape(2, 4, 3))
    (tmp_path / "p.yaml").write_text(yaml.safe_dump(doc))
    return {"config": tmp_path / "p.yaml", "x": tmp_path / "x.npy", "dir": tmp_path}


def _invoke(*args: str) -> Any:
    return CliRunner().invoke(app, ["pipeline", *args])


def test_check_prints_the_linked_tensors(files: dict[str, Path]) -> None:
    result = _invoke("check", str(files["config"]))
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[2] == "t\t2x4x3\tf32\ta -> b1, b2  [branch]"
    assert lines[-1] == "# branch_merge: 4 stages, 6 tensors on numpy:cpu: ok"
    summary = json.loads(_invoke("check", str(files["config"]), "--json").stdout)
    assert [s["connection"] for s in summary["stages"]] == ["linear", "merge", "linear", "merge"]


def test_run_writes_outputs_and_pool_figures(files: dict[str, Path]) -> None:
    out = files["dir"] / "out"
    result = _invoke(
        "run", str(files["config"]), "--input", f"x={files['x']}", "--output-dir", str(out),
        "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    x = np.load(files["x"])
    t = np.maximum(x, 0)
    k = np.arange(4, dtype=np.float32).reshape(4, 1)
    np.testing.assert_allclose(np.load(out / "y.npy"), t * k + t, rtol=1e-6)
    assert summary["outputs"] == [
        {"name": "y", "shape": [2, 4, 3], "dtype": "float32", "file": str(out / "y.npy")}
    ]
    assert [s["status"] for s in summary["stages"]] == ["ok"] * 4
    assert summary["fallbacks"] == 0
    assert (summary["pool"]["in_use_bytes"], summary["pool"]["warnings"]) == (0, 0)


@pytest.mark.parametrize(
    ("patch", "line"),
    [
        (
            {"pipeline": [{**LINEAR["pipeline"][0], "constraints": {"memory_alignment": 48}}]},
            "error: [runtime] pipeline[0].constraints.memory_alignment: 48 is not a power of two "
            ">= 32",
        ),
        (
            {"outputs": ["nowhere"]},
            "error: [runtime] outputs[0]: 'nowhere' is neither supplied nor produced by a stage",
        ),
    ],
)
def test_check_refuses_bad_configs_in_one_line(
    tmp_path: Path, patch: dict[str, Any], line: str
) -> None:
    doc = cfg(LINEAR, **patch)
    if patch.get("pipeline"):
        doc["outputs"] = ["c"]
    (tmp_path / "p.json").write_text(json.dumps(doc))
    result = _invoke("check", str(tmp_path / "p.json"))
    assert (result.exit_code, result.stderr.splitlines()) == (2, [line])


def test_run_refuses_bad_input_in_one_line(files: dict[str, Path]) -> None:
    wrong = files["dir"] / "wrong.npy"
    np.save(wrong, np.zeros((3, 3), np.float32))
    cases = [
        (["--input", f"x={wrong}"], "error: [runtime] input 'x' is [3, 3] float32, the pipeline "
         "takes [2, 4, 3] float32"),
        ([], "error: [runtime] missing input 'x'"),
        (["--input", "x"], "error: [runtime] --input 'x' is not NAME=FILE.npy"),
        (["--input", f"k={files['x']}"], "error: [runtime] unknown input 'k'; inputs: x"),
    ]  # fmt: skip
    for extra, line in cases:
        result = _invoke("run", str(files["config"]), *extra, "--output-dir", str(files["dir"]))
        assert (result.exit_code, result.stderr.splitlines()) == (2, [line]), extra


def test_a_failing_module_is_one_line_naming_it(tmp_path: Path) -> None:
    doc = {
        "schema": "refstack.pipeline/1",
        "inputs": {"x": {"shape": [3], "dtype": "f32"}},
        "pipeline": [
            {
                "name": "ln",
                "operator": "unary",
                "inputs": ["x"],
                "outputs": ["y"],
                "attrs": {"fn": "Log"},
                "constraints": {"nan_inf": "forbidden"},
            }
        ],
        "outputs": ["y"],
    }
    (tmp_path / "p.json").write_text(json.dumps(doc))
    np.save(tmp_path / "x.npy", np.array([1, -1, 2], np.float32))
    result = _invoke("run", str(tmp_path / "p.json"), "--input", f"x={tmp_path / 'x.npy'}")
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "error: [runtime] stage 'ln': module builtin operator unary 1.0.0 failed (NanInf: 1 "
        "NaN/Inf value(s) in output 'y') on inputs x: [3] f32 (op=unary)"
    ]
    assert not (tmp_path / "out").exists()
