"""Baseline: waived findings pass, new ones fail, expired waivers fail; CLI round trip."""

from __future__ import annotations

import datetime as dt
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from mapper.check import Severity, run_check
from mapper.check.baseline import Waiver, apply, load, save, updated
from mapper.check.errors import BaselineError

STACKMAP = Path(sys.executable).parent / "stackmap"


def _drift(root: Path, path: str, old: str, new: str) -> None:
    file = root / path
    file.write_text(file.read_text(encoding="utf-8").replace(old, new, 1), encoding="utf-8")


def _upward(root: Path) -> None:
    _drift(
        root,
        "fx/kmd/device.py",
        '"""Device memory."""\n',
        '"""Device memory."""\n\nfrom fx.umd.session import Session\n',
    )


def _rename(root: Path) -> None:
    _drift(root, "fx/umd/session.py", "submit(self, blob: bytes", "submit(self, data: bytes")


def test_waived_new_and_expired(clean_copy: Path) -> None:
    _upward(clean_copy)
    _rename(clean_copy)
    report = run_check(clean_copy, history=False)
    upward = next(f for f in report.findings if f.rule == "SM202")
    drift = next(f for f in report.findings if f.rule == "SM102")
    today = dt.date(2026, 3, 1)
    valid = Waiver(upward.fingerprint, "SM202", upward.subject, "kmd", dt.date(2026, 3, 1))
    applied = apply(report, [valid], today=today)
    assert [f.rule for f in applied.waived] == ["SM202"]
    assert [f.rule for f in applied.findings] == ["SM102"]  # new: not in the baseline
    assert applied.exit_code(Severity.ERROR) == 1
    expired = apply(report, [valid], today=dt.date(2026, 3, 2))  # the day after expiry
    assert {f.rule for f in expired.findings} == {"SM102", "SM202"}
    assert expired.expired == frozenset({upward.fingerprint})
    both = Waiver(drift.fingerprint, "SM102", drift.subject, "umd", dt.date(2026, 12, 1))
    clean = apply(report, [valid, both], today=today)
    assert clean.findings == () and clean.exit_code(Severity.NOTE) == 0


def test_save_load_update_round_trip(tmp_path: Path, clean_copy: Path) -> None:
    _upward(clean_copy)
    report = run_check(clean_copy, history=False)
    path = tmp_path / "baseline.yaml"
    first = updated((), report.findings, owner="alice", expires=dt.date(2027, 1, 1))
    save(path, first)
    assert load(path) == first
    renewed = updated(first, report.findings, owner="bob", expires=dt.date(2028, 1, 1))
    assert [w.owner for w in renewed] == ["alice"]  # existing waivers keep owner and expiry
    assert updated(first, (), owner="bob", expires=dt.date(2028, 1, 1)) == ()


@pytest.mark.parametrize(
    "content",
    [
        "waivers: [{fingerprint: abc, owner: x}]",
        "waivers: [{fingerprint: abc, owner: x, expires: soon}]",
        "waivers: {a: 1}",
        "waivers: [",
    ],
)
def test_malformed_baseline_is_an_error(tmp_path: Path, content: str) -> None:
    path = tmp_path / "b.yaml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(BaselineError):
        load(path)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(STACKMAP), *args], capture_output=True, text=True, timeout=120)


def test_cli_exit_codes_and_baseline(clean_repo: Path, commit: Callable[[Path, str], None]) -> None:
    assert _cli("check", str(clean_repo)).returncode == 0
    _upward(clean_repo)
    commit(clean_repo, "upward import")
    result = _cli("check", str(clean_repo), "--format", "json")
    assert result.returncode == 1
    assert [f["rule"] for f in json.loads(result.stdout)["findings"]] == ["SM202"]
    base = clean_repo / ".stackmap-baseline.yaml"
    upd = _cli(
        "check",
        str(clean_repo),
        "--update-baseline",
        "--owner",
        "kmd-team",
        "--expires",
        "2999-12-31",
    )
    assert upd.returncode == 0, upd.stderr
    assert yaml.safe_load(base.read_text())["waivers"][0]["owner"] == "kmd-team"
    assert _cli("check", str(clean_repo)).returncode == 0  # waived
    _rename(clean_repo)
    assert _cli("check", str(clean_repo)).returncode == 1  # a new finding still fails
    assert _cli("check", str(clean_repo), "--rule", "SM202").returncode == 0
    text = base.read_text().replace("2999-12-31", "2000-01-01")
    base.write_text(text)
    assert _cli("check", str(clean_repo), "--rule", "layer-upward").returncode == 1  # expired


def test_cli_cannot_run_exits_2(tmp_path: Path) -> None:
    assert _cli("check", str(tmp_path)).returncode == 2  # no stackmap.toml
    assert _cli("check", ".", "--rule", "SM999").returncode == 2
    assert _cli("check", ".", "--format", "yaml").returncode == 2


def test_cli_malformed_contract_exits_2_with_location(clean_copy: Path) -> None:
    contract = clean_copy / "contracts/umd_kmd.yaml"
    contract.write_text(contract.read_text().replace("kind: ioctl", "kind: doorbell"))
    result = _cli("check", str(clean_copy), "--json")
    assert result.returncode == 2
    error = json.loads(result.stdout)
    assert error["error"] == "ContractError" and error["path"] == "contracts/umd_kmd.yaml"
    assert error["line"] > 1


def test_cli_fail_on_threshold(clean_copy: Path) -> None:
    _drift(
        clean_copy,
        "contracts/umd_kmd.yaml",
        "      returns: None\n    sync: sync\n",
        "      returns: None\n",
    )  # SM401 is a warning
    assert _cli("check", str(clean_copy), "--fail-on", "error").returncode == 0
    assert _cli("check", str(clean_copy), "--fail-on", "warning").returncode == 1
    out = tmp = clean_copy / "out.sarif"
    assert _cli("check", str(clean_copy), "-f", "sarif", "-o", str(out)).returncode == 1
    assert json.loads(tmp.read_text())["version"] == "2.1.0"


def test_check_refreshes_a_missing_or_stale_map_first_and_says_so(clean_copy: Path) -> None:
    first = _cli("check", str(clean_copy))
    assert first.returncode == 0
    assert first.stderr.splitlines()[0] == (
        "stackmap check: no map has been built yet; refreshing the map (incremental ingest)"
    )
    assert "refreshing" not in _cli("check", str(clean_copy)).stderr  # fresh: read as stored
    with (clean_copy / "fx/kmd/device.py").open("a", encoding="utf-8") as fh:
        fh.write("\n\ndef added() -> None:\n    return None\n")
    stale = _cli("check", str(clean_copy))
    assert stale.stderr.splitlines()[0] == (
        "stackmap check: 1 file(s) changed since the map was built (fx/kmd/device.py, …); "
        "refreshing the map (incremental ingest)"
    )
    report = json.loads((clean_copy / ".stackmap/versions/2/report.json").read_text())
    assert report["parsed"] == ["fx/kmd/device.py"]
