"""SM201 on a call through an imported module that chains on an instance: the finding names
what the module provides (``mod.Thing``), not the call text (``mod.Thing().run``), so one
use is one finding and its subject is a symbol a contract can declare."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BIN = Path(sys.executable).parent
FILES = {
    "stackmap.toml": '[stackmap]\nname = "chained"\ndocs = []\ntests = []\n\n'
    '[[layers]]\nid = "app"\npaths = ["app/**"]\n\n[[layers]]\nid = "lib"\npaths = ["lib/**"]\n',
    "app/__init__.py": "",
    "app/main.py": "from lib import mod\n\n\ndef go():\n    return mod.Thing().run()\n",
    "lib/__init__.py": "",
    "lib/mod.py": "class Thing:\n    def run(self):\n        return 1\n",
}


def test_a_call_on_a_new_instance_is_one_finding_naming_the_class(tmp_path: Path) -> None:
    for rel, text in FILES.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    result = subprocess.run(
        [str(BIN / "stackmap"), "check", "--json", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    found = [(f["rule"], f["subject"], f["code"]) for f in json.loads(result.stdout)["findings"]]
    assert found == [
        ("SM201", "app->lib.mod", "app/main.py:1"),
        ("SM201", "app->lib.mod.Thing", "app/main.py:5"),
    ]
