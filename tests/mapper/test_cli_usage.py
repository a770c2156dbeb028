"""Usage errors of ``stackmap`` (a bad option, a missing argument, an unknown command, a
number out of range) are one line on stderr naming the help to read, and exit status 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

STACKMAP = Path(sys.executable).parent / "stackmap"


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["nosuch"], "error: No such command 'nosuch'. (see 'stackmap --help')"),
        (["--bogus"], "error: No such option: --bogus (see 'stackmap --help')"),
        (["ls", "--kind"], "error: Option '--kind' requires an argument."),
        (["path", "a"], "error: Missing argument 'target'. (see 'stackmap path --help')"),
        (
            ["impact", "--depth", "-1"],
            "error: Invalid value for '--depth': Input should be greater than or equal to 0 "
            "(see 'stackmap impact --help')",
        ),
        (
            ["bench", "impact", "--repeat", "0"],
            "error: Invalid value for '--repeat': Input should be greater than or equal to 1 "
            "(see 'stackmap bench impact --help')",
        ),
    ],
)
def test_a_usage_error_is_one_line_and_exit_2(argv: list[str], line: str, tmp_path: Path) -> None:
    proc = subprocess.run(
        [str(STACKMAP), *argv], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", line + "\n")
    assert list(tmp_path.iterdir()) == []
