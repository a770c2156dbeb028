"""The runtime over the gRPC UMD: same outputs as in process; a dead service is a typed error."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from stack.adapter import import_model
from stack.adapter.zoo import cnn, random_inputs
from stack.cli import app
from stack.compiler import CompileOptions, compile_graph
from stack.errors import StackError
from stack.kmd import FaultKind
from stack.runtime import Executable, Runtime
from stack.runtime.errors import ExecutionFaultError
from stack.umd.service.client import RetryPolicy
from stack.umd.service.remote import RemoteUmd
from stack.umd.service.server import ServerConfig, UmdServer


@pytest.fixture(scope="module")
def exe() -> Executable:
    return compile_graph(import_model(cnn()), CompileOptions(streams=2)).executable


@pytest.fixture(scope="module")
def feeds() -> list[dict[str, np.ndarray]]:
    return [random_inputs(cnn(), seed) for seed in (0, 1)]


def _in_process(exe: Executable, feeds: list[dict[str, np.ndarray]]) -> list[dict[str, np.ndarray]]:
    with Runtime("numpy", streams=2) as rt:
        model = rt.load(exe)
        return [model.run(f) for f in feeds]


def _same(runs: list[dict[str, np.ndarray]], refs: list[dict[str, np.ndarray]]) -> None:
    """Every run's outputs bit-equal to the in-process reference (same NumPy kernels)."""
    assert len(runs) == len(refs)
    for ours, ref in zip(runs, refs, strict=True):
        assert ours.keys() == ref.keys()
        for key in ref:
            np.testing.assert_array_equal(ours[key], ref[key])


@pytest.fixture
def server() -> Iterator[UmdServer]:
    srv = UmdServer(ServerConfig(port=0, backend="numpy"))
    srv.start()
    yield srv
    srv.stop()


def test_a_model_runs_the_same_through_the_service(
    exe: Executable, feeds: list[dict[str, np.ndarray]]
) -> None:
    srv = UmdServer(ServerConfig(port=0, backend="numpy"))
    srv.start()
    try:
        with Runtime(streams=2, umd=f"127.0.0.1:{srv.port}") as rt:
            model = rt.load(exe)
            assert len(model.image.streams) == 2  # two streams on the server ...
            plan = model.image.schedule
            assert any(g.waits for g in plan.groups)  # ... with cross-stream waits
            assert srv.service.shm.commits == 1  # the 1 MiB const segment went through shm
            remote = [model.run(f) for f in feeds]
            assert rt.umd.backend == "numpy"
            assert len(srv.umd.sessions.live()) == 1
        assert srv.umd.sessions.live() == []  # closing the runtime destroyed its session
        assert srv.umd.device.stats().allocations == 0
    finally:
        srv.stop()
    _same(remote, _in_process(exe, feeds))


def _serve(port: int = 0) -> tuple[subprocess.Popen[str], int]:
    """``refstack umd serve`` on ``port`` (0: a free one it binds); the process and its port."""
    proc = subprocess.Popen(
        [sys.executable, "-c", "from stack.cli import main; main()", "umd", "serve",
         "--port", str(port), "--backend", "numpy"],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    line = proc.stdout.readline() if proc.stdout else ""
    assert line.startswith("port="), line
    return proc, int(line.strip().removeprefix("port="))


def test_killing_the_service_mid_run_is_a_typed_error_and_a_restart_serves_the_next(
    exe: Executable, feeds: list[dict[str, np.ndarray]]
) -> None:
    proc, port = _serve()
    target = f"127.0.0.1:{port}"
    policy = RetryPolicy(timeout_s=10.0, retry_window_s=1.0)
    try:
        umd = RemoteUmd(target, policy=policy)
        rt = Runtime(streams=2, umd=umd)
        model = rt.load(exe)
        first_ok, errors = threading.Event(), []

        def keep_running() -> None:
            for _ in range(10_000):
                try:
                    model.run(feeds[0], timeout_s=10)
                except StackError as exc:
                    errors.append(exc)
                    return
                first_ok.set()

        runner = threading.Thread(target=keep_running)
        runner.start()
        assert first_ok.wait(60)
        proc.kill()  # mid-run: the runner is in a loop of runs
        proc.wait(30)
        runner.join(120)
        assert not runner.is_alive()
        assert len(errors) == 1 and isinstance(errors[0], ExecutionFaultError)
        assert errors[0].details["fault"] in ("TransportError", "SessionNotFoundError")
        proc, _ = _serve(port)  # a restarted service serves the next run, on the same port
        again = rt.load(exe)
        _same([again.run(feeds[1])], _in_process(exe, feeds[1:]))
        rt.close()
        umd.close()
    finally:
        proc.kill()
        proc.wait(30)


def test_refstack_run_with_umd_writes_the_in_process_outputs(
    exe: Executable, feeds: list[dict[str, np.ndarray]], tmp_path: Path
) -> None:
    sx = tmp_path / "cnn.sx"
    sx.write_bytes(exe.to_bytes())
    ((name, array),) = feeds[0].items()
    np.save(tmp_path / "x.npy", array)
    srv = UmdServer(ServerConfig(port=0, backend="numpy"))
    srv.start()
    try:
        args = ["run", str(sx), "--input", f"{name}={tmp_path / 'x.npy'}", "--json"]
        remote = CliRunner().invoke(
            app, [*args, "--umd", f"127.0.0.1:{srv.port}", "--output-dir", str(tmp_path / "r")]
        )
        local = CliRunner().invoke(app, [*args, "--output-dir", str(tmp_path / "l")])
    finally:
        srv.stop()
    assert remote.exit_code == 0 and local.exit_code == 0, remote.output + local.output
    files = [(rec["file"], rec["name"]) for rec in json.loads(remote.stdout)["outputs"]]
    assert json.loads(remote.stdout)["backend"] == "numpy"
    for rec in json.loads(local.stdout)["outputs"]:
        (file,) = [f for f, n in files if n == rec["name"]]
        np.testing.assert_array_equal(np.load(file), np.load(rec["file"]))


def test_a_steady_run_is_one_round_trip(
    exe: Executable, feeds: list[dict[str, np.ndarray]], server: UmdServer
) -> None:
    with Runtime(streams=2, umd=f"127.0.0.1:{server.port}") as rt:
        model = rt.load(exe)
        groups = len(model.image.schedule.groups)
        assert groups == 5 and all(b is not None for b in model.image.cmdbufs)
        assert server.service.calls["RecordCommands"] == groups  # each group recorded at load
        model.run(feeds[0])  # learns which reads follow a run
        before = server.service.calls.copy()
        outputs = [model.run(f) for f in feeds * 2]
        delta = server.service.calls - before
    assert dict(delta) == {"Execute": 4}  # writes, submits, waits and reads: one call per run
    assert server.service.calls["SubmitCommands"] == 0  # runs name the recorded buffers
    _same(outputs, _in_process(exe, feeds * 2))


@pytest.mark.parametrize("kind", [FaultKind.ECC, FaultKind.BAD_ADDRESS])
def test_a_device_fault_on_the_service_is_recovered(
    exe: Executable, feeds: list[dict[str, np.ndarray]], kind: FaultKind, server: UmdServer
) -> None:
    with Runtime(streams=2, umd=f"127.0.0.1:{server.port}") as rt:
        model = rt.load(exe)
        (session,) = server.umd.sessions.live()
        queue = session.queue_of(model.image.streams[1])
        server.umd.device.inject_fault(session.ctx, queue, kind)
        ours = model.run(feeds[0], timeout_s=10)
        assert model.last_stats is not None and model.last_stats.attempts == 2
        assert model.last_stats.faults == (kind.name,)
        again = model.run(feeds[0])
        assert model.last_stats.attempts == 1
    _same([ours, again], _in_process(exe, feeds[:1]) * 2)
