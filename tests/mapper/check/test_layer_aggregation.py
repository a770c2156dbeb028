"""Layer violations on a foreign stack come once per (file, rule, target layer), with the count
and places of the use sites; findings in generated code are left out."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BIN = Path(sys.executable).parent
CONFIG = """[stackmap]
name = "agg"
docs = []
tests = []
{generated}

[[layers]]
id = "app"
paths = ["app/**"]

[[layers]]
id = "mid"
paths = ["mid/**"]

[[layers]]
id = "kern"
paths = ["kern/**"]
"""
FILES = {
    "app/app.c": "int app_a(int x) {\n  return x;\n}\nint app_b(int x) {\n  return x + 1;\n}\n"
    "int app_main(void) {\n  return mid_run() + kern_poke(1) + kern_poke(2);\n}\n",
    "mid/mid.c": "int mid_run(void) {\n  return 0;\n}\n",
    "kern/k.c": "int kern_poke(int v) {\n  return app_a(v)\n    + app_b(v)\n"
    "    + app_a(v + 1);\n}\nint kern_other(void) {\n  return app_a(0);\n}\n",
    "kern/gen/k2.c": "int kern_two(void) {\n  return app_b(3);\n}\n",
}


def _check(root: Path) -> list[tuple[str, str, str]]:
    result = subprocess.run(
        [str(BIN / "stackmap"), "check", str(root), "--json", "--rule", "SM202", "--rule", "SM203"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1, result.stderr
    return [(f["rule"], f["code"], f["message"]) for f in json.loads(result.stdout)["findings"]]


def test_one_finding_per_file_rule_and_target_layer(tmp_path: Path) -> None:
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    (tmp_path / "stackmap.toml").write_text(CONFIG.format(generated=""))
    assert _check(tmp_path) == [
        (
            "SM203",
            "app/app.c:8",
            "app skips to kern: call of kern_poke (kern/k.c) with no app→kern contract "
            "declaring it; 2 use sites in this file: kern_poke (line 8 ×2)",
        ),
        (
            "SM202",
            "kern/gen/k2.c:2",
            "kern depends upward on app: call of app_b (app/app.c)",
        ),
        (
            "SM202",
            "kern/k.c:2",
            "kern depends upward on app: call of app_a (app/app.c); 4 use sites in this file: "
            "app_a (line 2), app_b (line 3), app_a (line 4), app_a (line 7)",
        ),
    ]
    (tmp_path / "stackmap.toml").write_text(CONFIG.format(generated='generated = ["kern/gen/**"]'))
    assert [code for _, code, _ in _check(tmp_path)] == ["app/app.c:8", "kern/k.c:2"]
