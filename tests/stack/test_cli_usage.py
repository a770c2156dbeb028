"""Usage errors of ``refstack`` (a bad option, a missing argument, an unknown command, a
number out of range) are one line on stderr naming the help to read, and exit status 2."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REFSTACK = Path(sys.executable).parent / "refstack"


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["nosuch"], "error: No such command 'nosuch'. (see 'refstack --help')"),
        (["--bogus"], "error: No such option: --bogus (see 'refstack --help')"),
        (["compile"], "error: Missing argument 'model'. (see 'refstack compile --help')"),
        (
            ["umd", "serve", "--port", "99999"],
            "error: Invalid value for '--port': Input should be less than or equal to 65535 "
            "(see 'refstack umd serve --help')",
        ),
        (
            ["bench", "model", "mlp", "--runs", "x"],
            "error: Invalid value for '--runs': Input should be a valid integer, unable to "
            "parse string as an integer (see 'refstack bench model --help')",
        ),
    ],
)
def test_a_usage_error_is_one_line_and_exit_2(argv: list[str], line: str, tmp_path: Path) -> None:
    proc = subprocess.run(
        [str(REFSTACK), *argv], capture_output=True, text=True, timeout=120, cwd=tmp_path
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", line + "\n")
    assert list(tmp_path.iterdir()) == []
