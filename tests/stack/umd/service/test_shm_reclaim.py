"""Shared-memory regions of a dead server are reclaimed by the next one; SIGTERM is prompt."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from stack.umd.service import umd_pb2 as pb
from stack.umd.service import umd_pb2_grpc as pb_grpc
from stack.umd.service.shm import PREFIX, SHM_DIR, ShmRegistry, reclaim_orphans


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait(30)
    return proc.pid


def test_reclaim_unlinks_regions_of_dead_pids_only(tmp_path: Path) -> None:
    dead = tmp_path / f"{PREFIX}{_dead_pid()}_abc_1"
    live = tmp_path / f"{PREFIX}{os.getpid()}_abc_2"
    other = tmp_path / "someone_else_1"
    for p in (dead, live, other):
        p.write_bytes(b"x")
    assert reclaim_orphans(tmp_path) == [dead.name]
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([live.name, other.name])


def _serve() -> tuple[subprocess.Popen[str], int]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "stack.umd.service", "--port", "0", "--backend", "numpy"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        start_new_session=True,  # its own process group: server and resource tracker
    )
    line = proc.stdout.readline() if proc.stdout else ""
    assert line.startswith("port="), line
    return proc, int(line.split("=")[1])


@pytest.mark.skipif(not SHM_DIR.is_dir(), reason="needs /dev/shm")
def test_a_restarted_server_reclaims_what_a_killed_one_leaked() -> None:
    proc, port = _serve()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as chan:
            stub = pb_grpc.InstructionTranslatorStub(chan)
            sid = stub.CreateSession(pb.CreateSessionRequest(), timeout=30).session_id
            region = stub.OpenSharedMemory(
                pb.OpenShmRequest(session_id=sid, nbytes=4096), timeout=30
            )
        assert region.name.startswith(PREFIX)
        os.killpg(proc.pid, signal.SIGKILL)  # the server and its resource tracker die together
        proc.wait(30)
        assert (SHM_DIR / region.name).exists()  # leaked
        registry = ShmRegistry()  # what a restarted server does first
        assert region.name in registry.reclaimed
        assert not (SHM_DIR / region.name).exists()
    finally:
        if proc.poll() is None:
            proc.kill()


def test_sigterm_with_waits_pending_answers_them_unavailable_and_exits() -> None:
    proc, port = _serve()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}") as chan:
            stub = pb_grpc.InstructionTranslatorStub(chan)
            sid = stub.CreateSession(pb.CreateSessionRequest(), timeout=30).session_id
            req = pb.WaitFenceRequest(session_id=sid, fence_value=1 << 62, timeout_ms=3_600_000)
            waits = [stub.WaitFence.future(req) for _ in range(3)]
            stub.Echo(pb.EchoRequest(), timeout=30)  # the waits are in by now (same channel)
            proc.terminate()
            codes = [w.exception(timeout=60).code() for w in waits]  # type: ignore[union-attr]
        assert codes == [grpc.StatusCode.UNAVAILABLE] * 3
        assert proc.wait(60) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
