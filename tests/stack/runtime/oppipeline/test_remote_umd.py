"""A pipeline on a UMD service is refused with the reason (a real service, in a subprocess on
127.0.0.1): the UMD protocol carries none of the device description, shape inference and
per-stage pool calls that linking and running a pipeline use. Models still run there."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from stack.runtime import Runtime
from stack.runtime.errors import ModelLoadError
from stack.runtime.runtime import REMOTE_PIPELINES
from tests.stack.runtime.oppipeline.configs import BRANCH_MERGE

CONFIG = Path(__file__).parents[4] / "examples" / "pipelines" / "residual_block.yaml"


def test_a_pipeline_on_a_umd_service_is_a_typed_refusal_naming_what_is_missing() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", "from stack.cli import main; main()", "umd", "serve",
         "--host", "127.0.0.1", "--port", "0", "--backend", "numpy"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        line = proc.stdout.readline() if proc.stdout else ""
        assert line.startswith("port="), line
        with Runtime(umd=f"127.0.0.1:{line.strip().removeprefix('port=')}") as rt:
            rt.umd.create_session().close()  # the service answers
            assert rt.umd.backend == "numpy"
            for config in (BRANCH_MERGE, CONFIG):
                with pytest.raises(ModelLoadError) as e:
                    rt.open_pipeline(config)
                assert e.value.message == REMOTE_PIPELINES
        assert "no device capabilities or operator selection" in REMOTE_PIPELINES
    finally:
        proc.terminate()
        proc.wait(60)
