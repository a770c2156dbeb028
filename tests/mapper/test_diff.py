"""``stackmap diff`` on a fixture git history: compatible changes, then breaking ones."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from mapper.check.errors import RevisionError
from mapper.versions import Impact, diff_revisions

CLEAN = Path(__file__).parent / "fixtures" / "check" / "clean"
STACKMAP = Path(sys.executable).parent / "stackmap"
ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "f",
    "GIT_AUTHOR_EMAIL": "f@example.invalid",
    "GIT_COMMITTER_NAME": "f",
    "GIT_COMMITTER_EMAIL": "f@example.invalid",
    "GIT_CONFIG_GLOBAL": os.devnull,
}


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, env=ENV)


def _edit(repo: Path, path: str, old: str, new: str) -> None:
    file = repo / path
    text = file.read_text(encoding="utf-8")
    assert old in text, (path, old)
    file.write_text(text.replace(old, new, 1), encoding="utf-8")


def _tag(repo: Path, tag: str) -> None:
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", tag)
    _git(repo, "tag", tag)


@pytest.fixture(scope="module")
def history(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = tmp_path_factory.mktemp("history") / "stack"
    shutil.copytree(CLEAN, repo)
    _git(repo, "init", "-q", "-b", "main")
    _tag(repo, "v1")
    # v2: compatible only
    _edit(
        repo,
        "fx/kmd/device.py",
        "align: int = 256) -> int:",
        "align: int = 256, zero: bool = False) -> int:",
    )
    _edit(
        repo,
        "contracts/umd.proto",
        "  bool cache_hit = 2;\n",
        "  bool cache_hit = 2;\n  uint32 kernel_id = 3;\n",
    )
    _edit(
        repo,
        "fx/kmd/device.py",
        "def scrub(va: int) -> None:",
        "def trim(va: int) -> None:\n    return None\n\n\ndef scrub(va: int) -> None:",
    )
    _tag(repo, "v2")
    # v3: breaking
    _edit(
        repo,
        "fx/umd/session.py",
        "blob: bytes, *, wait: bool = False",
        "blob: memoryview, *, wait: bool",
    )
    _edit(
        repo,
        "fx/kmd/device.py",
        "def free(self, va: int) -> None:",
        "def free(self, addr: int) -> None:",
    )
    _edit(repo, "contracts/umd.proto", "  rpc Ping(PingRequest) returns (PingReply);\n", "")
    _edit(repo, "contracts/umd.proto", "  uint64 handle = 1;", "  uint64 handle = 4;")
    _edit(repo, "fx/kmd/include/fx_kmd.h", "    unsigned long va;", "    unsigned int va;")
    _edit(
        repo,
        "fx/kmd/include/fx_kmd.h",
        "_IOWR('F', 1, struct fx_alloc)",
        "_IOWR('F', 2, struct fx_alloc)",
    )
    _edit(repo, "fx/kmd/include/fx_kmd.h", "#define FX_DTYPE_I8 3", "#define FX_DTYPE_I8 9")
    _tag(repo, "v3")
    return repo


def test_compatible_changes(history: Path) -> None:
    changes = diff_revisions(history, "v1", "v2")
    assert all(c.impact is Impact.COMPATIBLE for c in changes)
    assert {(c.kind, c.name) for c in changes} == {
        ("python", "fx.kmd.device.Device.alloc"),
        ("field", "fx.umd.v1.TranslateReply.kernel_id"),
        ("python", "fx.kmd.device.trim"),
    }


def test_breaking_changes(history: Path) -> None:
    changes = diff_revisions(history, "v2", "v3")
    breaking = {(c.kind, c.name) for c in changes if c.impact is Impact.BREAKING}
    assert breaking == {
        ("python", "fx.umd.session.Session.submit"),  # type changed, default removed
        ("python", "fx.kmd.device.Device.free"),  # parameter renamed
        ("rpc", "fx.umd.v1.Translator.Ping"),  # rpc removed
        ("field", "fx.umd.v1.TranslateReply.handle"),  # field number changed
        ("struct", "fx_alloc"),
        ("ioctl", "FX_IOCTL_ALLOC"),
        ("macro", "FX_DTYPE_I8"),
    }
    submit = [c.message for c in changes if c.name == "fx.umd.session.Session.submit"]
    assert any("type bytes → memoryview" in m for m in submit)
    assert any("lost its default" in m for m in submit)
    assert not [c for c in changes if c.impact is Impact.COMPATIBLE]


def test_same_revision_has_no_changes(history: Path) -> None:
    assert diff_revisions(history, "v3", "v3") == []


def test_unknown_revision(history: Path) -> None:
    with pytest.raises(RevisionError):
        diff_revisions(history, "v1", "no-such-tag")


def test_cli_json_and_fail_on_breaking(history: Path) -> None:
    def run(*args: str) -> subprocess.CompletedProcess[str]:
        argv = [str(STACKMAP), "diff", *args, "--root", str(history)]
        return subprocess.run(argv, capture_output=True, text=True, timeout=120)

    result = run("v1", "v3", "--json")
    assert result.returncode == 0
    doc = json.loads(result.stdout)
    assert doc["breaking"] == 9 and doc["compatible"] == 3  # free: removed + new param
    assert run("v1", "v2", "--fail-on-breaking").returncode == 0
    assert run("v2", "v3", "--fail-on-breaking").returncode == 1
    assert run("v1", "nope").returncode == 2
