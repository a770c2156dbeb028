"""The example pipeline under ``examples/pipelines/`` runs as its header says."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from typer.testing import CliRunner

from stack.cli import app
from stack.runtime.oppipeline import open_pipeline
from stack.runtime.oppipeline.schedule import dependencies
from stack.umd import Umd

EXAMPLE = Path(__file__).parents[4] / "examples" / "pipelines"
CONFIG = EXAMPLE / "residual_block.yaml"


def _conv_same(x: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Stride-1 convolution with 'same' zero padding, summed tap by tap (NCHW, OIHW)."""
    kh, kw = w.shape[2:]
    ph, pw = kh // 2, kw // 2
    xp = np.pad(x, ((0, 0), (0, 0), (ph, ph), (pw, pw)))
    h, wd = x.shape[2:]
    out = np.zeros((x.shape[0], w.shape[0], h, wd), np.float64)
    for i in range(kh):
        for j in range(kw):
            out += np.einsum("nchw,oc->nohw", xp[:, :, i : i + h, j : j + wd], w[:, :, i, j])
    return out


def test_the_example_runs_from_the_command_line(tmp_path: Path) -> None:
    header = [line for line in CONFIG.read_text().splitlines() if "refstack pipeline" in line]
    assert len(header) == 2  # the commands below are the ones its header gives
    check = CliRunner().invoke(app, ["pipeline", "check", str(CONFIG)])
    assert check.exit_code == 0, check.output
    assert check.stdout.splitlines()[-1] == "# residual_block: 4 stages, 7 tensors on numpy:cpu: ok"
    out = tmp_path / "out"
    run = CliRunner().invoke(
        app,
        ["pipeline", "run", str(CONFIG), "--input", f"x={EXAMPLE / 'x.npy'}",
         "--output-dir", str(out), "--json"],
    )  # fmt: skip
    assert run.exit_code == 0, run.output
    summary = json.loads(run.stdout)
    assert [s["status"] for s in summary["stages"]] == ["ok"] * 4
    # every stage started and completed once; whether side overlapped stem/act is up to timing
    marks = sorted((e["stage"], e["mark"]) for e in summary["timeline"])
    assert marks == sorted(
        (s, m) for s in ("stem", "act", "side", "join") for m in ("started", "completed")
    )
    assert [e["seq"] for e in summary["timeline"]] == list(range(8))
    assert all(pair in (["stem", "side"], ["act", "side"]) for pair in summary["overlapped"])
    x, w3, w1 = (np.load(EXAMPLE / f"{n}.npy") for n in ("x", "w3", "w1"))
    want = np.maximum(_conv_same(x, w3), 0) + _conv_same(x, w1)
    np.testing.assert_allclose(np.load(out / "y.npy"), want, rtol=1e-4, atol=1e-5)


def test_the_examples_side_branch_is_independent_of_the_stem() -> None:
    with Umd("numpy") as umd:
        runner = open_pipeline(CONFIG, umd)
        deps = dependencies(runner.linked.stages, runner.linked.tensors)
        assert deps == {
            "stem": frozenset(),
            "act": frozenset({"stem"}),
            "side": frozenset(),
            "join": frozenset({"act", "side"}),
        }
        assert runner.width == 2
        runner.close()
