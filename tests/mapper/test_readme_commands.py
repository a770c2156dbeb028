"""The README's ``stackmap diff`` example runs as written on a clone of this repository.

It once named a tag (``v0.1.0``) that no clone has; the example now names revisions every full
clone has, and this test runs it exactly as the README spells it.
"""

from __future__ import annotations

import shlex
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
STACKMAP = Path(sys.executable).parent / "stackmap"


def _readme_commands(program: str, verb: str) -> list[list[str]]:
    commands = []
    for line in (REPO / "README.md").read_text(encoding="utf-8").splitlines():
        code = line.split("#", 1)[0].strip()
        if code.startswith(f"{program} {verb} "):
            commands.append(shlex.split(code))
    return commands


def _git(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["git", "-C", str(REPO), *argv], capture_output=True, text=True, timeout=60, check=False
    )


def test_the_readme_diff_example_runs_as_written() -> None:
    commands = _readme_commands("stackmap", "diff")
    assert len(commands) == 1, commands
    argv = commands[0]
    if _git("rev-parse", "--is-shallow-repository").stdout.strip() != "false":
        pytest.skip("a shallow clone lacks the history the example compares")
    for rev in argv[2:]:
        assert _git("rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}").returncode == 0, rev
    result = subprocess.run(
        [str(STACKMAP), *argv[1:]], cwd=REPO, capture_output=True, text=True, timeout=300
    )
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout.strip().splitlines()[-1].endswith("compatible"), result.stdout
