"""Both console scripts answer --version and --help, and refuse unbuilt commands loudly."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent


def _run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / argv[0]), *argv[1:]], capture_output=True, text=True, timeout=120
    )


@pytest.mark.parametrize("tool", ["stackmap", "refstack"])
def test_version(tool: str) -> None:
    result = _run(tool, "--version")
    assert result.returncode == 0
    assert result.stdout.startswith(f"{tool} 0.")


@pytest.mark.parametrize("tool", ["stackmap", "refstack"])
def test_help_shows_examples(tool: str) -> None:
    result = _run(tool, "--help")
    assert result.returncode == 0
    assert "Examples" in result.stdout
    assert f"{tool} " in result.stdout


def test_unknown_command_fails() -> None:
    result = _run("refstack", "no-such-command")
    assert result.returncode != 0
