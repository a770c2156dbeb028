"""Hostile input to ``stackmap``: nothing explodes, nothing escapes the repository, nothing is lost.

Each case runs the real console script in a child process bounded in time (``timeout``) and
memory (``RLIMIT_AS``), then asserts the exit status, the reason the map gives (a skip or a
warning in the ingest report, or a one-line error) and that the previous map is intact.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.main import get_command
from typer.testing import CliRunner

from mapper.cli import app
from tests.mapper.conftest import MINIREPO

STACKMAP = Path(sys.executable).parent / "stackmap"
MEMORY_LIMIT = 3 << 30

BOMB = """\
contract: bomb
upper: compiler
lower: runtime
a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f]
h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]
i: &i [*h,*h,*h,*h,*h,*h,*h,*h,*h]
description: *i
"""


def _limits() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_LIMIT, MEMORY_LIMIT))


def stackmap(
    *argv: str, cwd: Path | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(STACKMAP), *argv], capture_output=True, text=True, timeout=timeout,
        preexec_fn=_limits, cwd=cwd,
    )  # fmt: skip


def ingested(repo: Path, *extra: str) -> dict[str, Any]:
    """Ingest ``repo`` without embeddings; the JSON report (asserting exit 0, no traceback)."""
    result = stackmap("ingest", str(repo), "--no-embed", "--json", *extra)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def skips(report: dict[str, Any]) -> dict[str, str]:
    return {s["path"]: s["reason"] for s in report["skips"]}


def node_ids(repo: Path) -> set[str]:
    result = stackmap("ls", "-C", str(repo), "--json")
    assert result.returncode == 0, result.stderr
    return {row["id"] for row in json.loads(result.stdout)}


def store_bytes(repo: Path) -> int:
    return sum(p.stat().st_size for p in (repo / ".stackmap").rglob("*") if p.is_file())


def test_yaml_bomb_contract_is_skipped_and_the_map_kept(minirepo: Path) -> None:
    before = ingested(minirepo)
    nodes, size = node_ids(minirepo), store_bytes(minirepo)
    (minirepo / "contracts" / "bomb.yaml").write_text(BOMB, encoding="utf-8")
    assert len(BOMB.encode()) < 450
    report = ingested(minirepo)
    reason = skips(report)["contracts/bomb.yaml"]
    assert reason == (
        "invalid YAML: aliases expand to more than 200000 nodes (refused unread) (line 9)"
    )
    assert report["version"] == before["version"] + 1
    assert node_ids(minirepo) == nodes
    assert store_bytes(minirepo) - size < 1 << 20  # two versions kept, nothing blown up


def test_yaml_bomb_in_front_matter_is_a_warning(minirepo: Path) -> None:
    body = BOMB.replace("contract: bomb\nupper: compiler\nlower: runtime\n", "layer: runtime\n")
    page = minirepo / "docs" / "runtime" / "bomb.md"
    page.write_text(f"---\n{body}---\n# Bomb\n\nText.\n", encoding="utf-8")
    report = ingested(minirepo)
    assert [w for w in report["warnings"] if "bomb.md" in w] == [
        "docs/runtime/bomb.md:8: invalid YAML: aliases expand to more than 200000 nodes"
        " (refused unread)"
    ]
    assert "doc:docs/runtime/bomb.md" in node_ids(minirepo)


def test_duplicate_yaml_key_is_an_error_with_its_line(minirepo: Path) -> None:
    path = minirepo / "contracts" / "compiler_runtime.yaml"
    text = path.read_text(encoding="utf-8")
    path.write_text(text.replace("lower: runtime\n", "lower: runtime\nlower: driver\n", 1))
    line = text.splitlines().index("lower: runtime") + 2
    reason = skips(ingested(minirepo))["contracts/compiler_runtime.yaml"]
    assert reason == f"invalid YAML: duplicate key 'lower' (line {line})"


def test_symlinks_out_of_the_repository_are_skipped(minirepo: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text("def stolen_secret():\n    return 1\n", encoding="utf-8")
    os.symlink("/", minirepo / "runtime" / "rootfs")
    os.symlink(outside, minirepo / "runtime" / "stolen.py")
    generated = minirepo / "build" / "gen"  # ignored folder, reached through a link inside
    generated.mkdir(parents=True)
    (generated / "made.py").write_text("def made_here():\n    return 2\n", encoding="utf-8")
    os.symlink(generated, minirepo / "runtime" / "inside")
    report = ingested(minirepo)
    assert skips(report)["runtime/rootfs"] == "symlink leaves the repository (-> /)"
    assert skips(report)["runtime/stolen.py"] == (
        f"symlink leaves the repository (-> {os.path.realpath(outside)})"
    )
    assert "runtime/inside" not in skips(report)
    ids = node_ids(minirepo)
    assert not [i for i in ids if "stolen" in i or "rootfs" in i]
    assert [i for i in ids if i.endswith("made_here")] == ["symbol:runtime.inside.made.made_here"]


def test_pep263_latin1_python_is_ingested(minirepo: Path) -> None:
    source = "# -*- coding: latin-1 -*-\ndef caf\u00e9_size():\n    return '\u00e9t\u00e9'\n"
    (minirepo / "runtime" / "latin.py").write_bytes(source.encode("latin-1"))
    report = ingested(minirepo)
    assert "runtime/latin.py" not in skips(report)
    assert [i for i in node_ids(minirepo) if i.endswith("caf\u00e9_size")] != []


def refused(result: subprocess.CompletedProcess[str], code: int, *phrases: str) -> str:
    """Assert a refusal: exit ``code``, no traceback, one ``error:`` line holding the phrases."""
    err = result.stderr
    assert result.returncode == code, (result.returncode, err)
    assert "Traceback" not in err + result.stdout
    lines = [line for line in err.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, err
    for phrase in phrases:
        assert phrase in lines[0], err
    return lines[0]


def _edit_config(repo: Path, old: str, new: str) -> str:
    """Replace ``old`` by ``new`` in the config; returns the original text."""
    path = repo / "stackmap.toml"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return text


def test_config_unknown_key_names_its_line_and_a_suggestion(minirepo: Path) -> None:
    ingested(minirepo)
    nodes = node_ids(minirepo)
    good = _edit_config(minirepo, 'store = ".stackmap"', 'stroe = ".stackmap"')
    line = refused(stackmap("ingest", str(minirepo), "--no-embed"), 2)
    assert line == "error: stackmap.toml:8: unknown [stackmap] key 'stroe'; did you mean 'store'?"
    (minirepo / "stackmap.toml").write_text(good, encoding="utf-8")
    assert node_ids(minirepo) == nodes


def test_config_wrong_type_names_its_line(minirepo: Path) -> None:
    _edit_config(minirepo, 'name = "mini"', "name = 3")
    line = refused(stackmap("ingest", str(minirepo), "--no-embed"), 2)
    assert line == "error: stackmap.toml:3: name must be a string, not int"


def test_config_unknown_layer_key(minirepo: Path) -> None:
    _edit_config(minirepo, 'paths = ["compiler/**"]', 'path = ["compiler/**"]')
    line = refused(stackmap("ingest", str(minirepo), "--no-embed"), 2)
    assert line == (
        "error: stackmap.toml:15: unknown [[layers]] 'compiler' key 'path'; did you mean 'paths'?"
    )


def test_config_empty_file(minirepo: Path) -> None:
    (minirepo / "stackmap.toml").write_text("", encoding="utf-8")
    refused(stackmap("ingest", str(minirepo), "--no-embed"), 2, "stackmap.toml is empty")


def test_config_bare_folder_means_the_whole_folder(minirepo: Path) -> None:
    ingested(minirepo)
    nodes = node_ids(minirepo)
    _edit_config(
        minirepo, 'paths = ["runtime/**", "kernels/**"]', 'paths = ["runtime", "kernels/"]'
    )
    report = ingested(minirepo)
    assert not [w for w in report["warnings"] if w.startswith("stackmap.toml")]
    assert node_ids(minirepo) == nodes


def test_config_glob_matching_nothing_is_a_warning(minirepo: Path) -> None:
    _edit_config(minirepo, 'paths = ["compiler/**"]', 'paths = ["compiler/**", "compilr/*.py"]')
    report = ingested(minirepo)
    assert [w for w in report["warnings"] if w.startswith("stackmap.toml")] == [
        "stackmap.toml: layer 'compiler' path 'compilr/*.py' matches no file"
    ]


def test_config_whose_layers_match_no_file_is_an_error(minirepo: Path) -> None:
    first = ingested(minirepo)
    nodes = node_ids(minirepo)
    text = (minirepo / "stackmap.toml").read_text(encoding="utf-8")
    for old in ('"compiler/**"', '"runtime/**", "kernels/**"', '"driver/**", "proto/**"'):
        text = text.replace(f"paths = [{old}]", 'paths = ["nowhere/**"]')
    (minirepo / "stackmap.toml").write_text(text, encoding="utf-8")
    refused(stackmap("ingest", str(minirepo), "--no-embed"), 2, "no code file lies in any layer")
    assert node_ids(minirepo) == nodes
    status = stackmap("status", str(minirepo), "--json")
    assert json.loads(status.stdout)["map_version"] == first["version"]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One ingested copy of the miniature repository, shared by the read-only CLI cases."""
    dest = tmp_path_factory.mktemp("hostile-cli") / "minirepo"
    shutil.copytree(MINIREPO, dest, ignore=shutil.ignore_patterns(".stackmap"))
    ingested(dest)
    return dest


def test_check_output_in_a_missing_folder_is_a_usage_error(built: Path) -> None:
    out = built / "missing" / "dir" / "out.json"
    refused(stackmap("check", str(built), "-o", str(out), "--no-history"), 2, "does not exist")
    assert not (built / "missing").exists()


def test_check_refuses_to_write_over_its_baseline(built: Path) -> None:
    baseline = built / "accepted.yaml"
    baseline.write_text("waivers: []\n", encoding="utf-8")
    result = stackmap("check", str(built), "--baseline", str(baseline), "-o", str(baseline))
    refused(result, 2, "is also an input")
    assert baseline.read_text(encoding="utf-8") == "waivers: []\n"


def test_check_prints_its_summary_once(built: Path) -> None:
    result = stackmap("check", str(built), "--no-history")
    assert "Traceback" not in result.stderr
    both = result.stdout + result.stderr
    assert [line for line in both.splitlines() if line.startswith("stackmap check:")] == [
        "stackmap check: 9 findings (5 error, 4 warning, 0 note)"
    ]


def test_search_unknown_kind_errors_like_ls(built: Path) -> None:
    search = refused(stackmap("search", "memory", "-C", str(built), "--kind", "foo"), 2)
    listing = refused(stackmap("ls", "-C", str(built), "--kind", "foo"), 2)
    assert search == listing
    assert search.startswith("error: unknown node kind 'foo'; known: component, doc,")


@pytest.mark.parametrize("query", ["", "   "])
def test_search_refuses_an_empty_query(built: Path, query: str) -> None:
    refused(stackmap("search", query, "-C", str(built)), 2, "an empty query matches nothing")


def test_debug_shows_the_traceback(built: Path) -> None:
    argv = ("check", str(built), "-o", str(built / "no" / "x.json"))
    assert "Traceback" not in stackmap(*argv).stderr
    (built / "bad").mkdir()
    (built / "bad" / "stackmap.toml").write_text("[stackmap]\nstroe = 1\n", encoding="utf-8")
    plain = stackmap("ls", "-C", str(built / "bad"))
    refused(plain, 2, "unknown [stackmap] key 'stroe'; did you mean 'store'?")
    debug = stackmap("--debug", "ls", "-C", str(built / "bad"))
    assert debug.returncode == 2 and "Traceback" not in debug.stderr  # a typed error: handled


def _options() -> Iterator[tuple[list[str], str, str]]:
    """(command path, option, type) for every number, path and enum option, and the string
    options whose values are checked (formats, node kinds); ``serve`` only for its port."""
    checked = {"--format", "-f", "--kind"}

    def walk(cmd: Any, path: list[str]) -> Iterator[tuple[list[str], str, str]]:
        sub = getattr(cmd, "commands", None)
        if sub:
            for name, child in sorted(sub.items()):
                yield from walk(child, [*path, name])
            return
        for param in cmd.params:
            if param.param_type_name != "option":
                continue
            kind, option = param.bare_type(), param.opts[-1]
            enum = kind[:1].isupper() and kind != "Path"
            if enum or (kind == "str" and set(param.opts) & checked):
                kind = "choice"
            if kind in ("int", "float", "Path", "choice") and (path != ["serve"] or kind == "int"):
                yield path, option, kind

    yield from walk(get_command(app), [])


SWEEP = list(_options())
MALFORMED = {
    "int": ["abc", "-1", "0", "1e99", "99999999999999999999", ""],
    "float": ["abc", "nan", "-1", "1e999", ""],
    "choice": ["nope", ""],
    "Path": ["/nonexistent/dir/x", "", "/"],
}


def test_the_sweep_covers_every_command_with_options() -> None:
    commands = {" ".join(path) for path, _, _ in SWEEP}
    assert {"check", "search", "ls", "path", "bench ingest", "impact", "serve"} <= commands


@pytest.mark.parametrize(
    ("path", "option", "kind"), SWEEP, ids=[f"{' '.join(p)} {o}" for p, o, _ in SWEEP]
)
def test_every_option_refuses_malformed_values_without_a_traceback(
    path: list[str], option: str, kind: str, built: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each malformed value ends in an exit status and at most one ``error:`` line."""
    monkeypatch.chdir(built)
    runner = CliRunner()
    positional = {"path": ["component:a", "component:b"], "show": ["component:a"],
                  "search": ["memory"], "ask": ["what frees memory"], "diff": ["HEAD"],
                  "role": ["compiler"], "init": [str(built)]}.get(" ".join(path), [])  # fmt: skip
    for value in MALFORMED[kind]:
        if (path, option, value) == (["serve"], "--port", "0"):
            continue  # a valid port: serve binds a free one (and would serve until stopped)
        result = runner.invoke(app, [*path, *positional, option, value])
        assert "Traceback" not in result.output, (path, option, value, result.output)
        assert isinstance(result.exception, SystemExit | type(None)), (
            path, option, value, result.exception,
        )  # fmt: skip
        assert result.exit_code in (0, 1, 2), (path, option, value, result.output)


@pytest.fixture(scope="module")
def embedded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """An ingested copy of the miniature repository with its vector index (built by the CLI,
    so that each step below is a fresh process, as after a crash)."""
    dest = tmp_path_factory.mktemp("hostile-index") / "minirepo"
    shutil.copytree(MINIREPO, dest, ignore=shutil.ignore_patterns(".stackmap"))
    result = stackmap("ingest", str(dest), "--json", timeout=600)
    assert result.returncode == 0, result.stderr
    return dest


def vector_hits(repo: Path, query: str) -> tuple[list[dict[str, Any]], str]:
    result = stackmap("search", query, "-C", str(repo), "--json", timeout=300)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    return json.loads(result.stdout), result.stderr


def test_search_knows_the_index_is_behind_after_an_interrupted_ingest(embedded: Path) -> None:
    store = embedded / ".stackmap"
    hits, err = vector_hits(embedded, "who frees device memory after the fence")
    assert hits[0]["match"] == "vector" and err == ""
    # What a kill -9 inside the index sync leaves: the marker, the graph of the old version.
    (store / "index-dirty").write_text("sync in progress\n", encoding="utf-8")
    hits, err = vector_hits(embedded, "who frees device memory after the fence")
    assert err == (
        "warning: semantic search is off: an ingest was interrupted while updating the vector"
        " index; run `stackmap ingest` to bring it up to date\n"
    )
    assert {h["match"] for h in hits} <= {"exact", "lexical"}
    # ... and a kill -9 after the sync, before the new graph became current.
    (store / "index-dirty").unlink()
    version = int((store / "current").read_text(encoding="utf-8"))
    (store / "index-version").write_text(f"{version + 1}\n", encoding="utf-8")
    _, err = vector_hits(embedded, "memory")
    assert f"the vector index is of map version {version + 1}, the map is version {version}" in err
    (store / "index-dirty").write_text("sync in progress\n", encoding="utf-8")
    assert stackmap("ingest", str(embedded), timeout=600).returncode == 0  # repairs
    assert not (store / "index-dirty").exists()
    hits, err = vector_hits(embedded, "who frees device memory after the fence")
    assert hits[0]["match"] == "vector" and err == ""


@pytest.mark.parametrize("full", [False, True], ids=["ingest", "ingest --full"])
def test_a_corrupted_index_is_a_clear_error_then_rebuilt(embedded: Path, full: bool) -> None:
    db = embedded / ".stackmap" / "chroma" / "chroma.sqlite3"
    data = bytearray(db.read_bytes())
    data[100 : 3 * 4096] = b"\xff" * (3 * 4096 - 100)  # schema pages: every query fails
    db.write_bytes(bytes(data))
    line = refused(stackmap("search", "device memory", "-C", str(embedded), timeout=300), 2)
    assert line.startswith("error: the vector index is damaged (") and line.endswith(
        "run `stackmap ingest` to rebuild it"
    )
    extra = ["--full"] if full else []
    result = stackmap("ingest", str(embedded), "--json", *extra, timeout=600)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["index"]["rebuilt"] == 1
    assert "the vector index is damaged" in result.stderr and "rebuilding it" in result.stderr
    hits, err = vector_hits(embedded, "who frees device memory after the fence")
    assert hits[0]["match"] == "vector" and err == ""


def test_progress_lines_on_stderr_only_for_long_steps(capsys: pytest.CaptureFixture[str]) -> None:
    from mapper.progress import step

    with step("quick step", after_s=30):
        pass
    with step("off", enabled=False, after_s=0):
        pass
    seen = ""
    with step("slow step", after_s=0.01, every_s=0.05):
        deadline = time.monotonic() + 60
        while "... still slow step" not in seen and time.monotonic() < deadline:
            seen += capsys.readouterr().err
            time.sleep(0.01)
    lines = (seen + capsys.readouterr().err).splitlines()
    assert lines[0] == "stackmap: slow step..."
    assert lines[1].startswith("stackmap: ... still slow step (")
    assert lines[-1].startswith("stackmap: slow step: done in ")
    assert not [line for line in lines if "quick" in line or "off" in line]


def test_every_config_field_is_a_known_key() -> None:
    import dataclasses

    from mapper.config import STACKMAP_KEYS, StackmapConfig

    fields = {f.name for f in dataclasses.fields(StackmapConfig)} - {"root", "layers", "roles"}
    assert sorted(fields - set(STACKMAP_KEYS)) == []


def test_a_yaml_bomb_baseline_is_refused_with_its_line(built: Path) -> None:
    baseline = built / "bomb-baseline.yaml"
    body = BOMB.replace("contract: bomb\nupper: compiler\nlower: runtime\n", "waivers: []\n")
    baseline.write_text(body, encoding="utf-8")
    result = stackmap("check", str(built), "--baseline", str(baseline), "--no-history")
    line = refused(result, 2)
    assert line == (
        f"error: {baseline}:7: invalid YAML: aliases expand to more than 200000 nodes"
        " (refused unread)"
    )


def test_kill_9_inside_the_index_sync_keeps_the_map_and_the_next_ingest_repairs(
    embedded: Path, tmp_path: Path
) -> None:
    """A real SIGKILL, at the moment the ingest has marked the index dirty (polled for)."""
    repo = tmp_path / "minirepo"
    shutil.copytree(embedded, repo)
    store = repo / ".stackmap"
    version, before = (store / "current").read_text(encoding="utf-8"), node_ids(repo)
    # Many new definitions: their chunks keep the index sync (and its marker) busy a while.
    (repo / "compiler" / "tiling.py").write_text(
        "".join(
            f'def tile_{i}(x):\n    """Tile the input along axis {i} for blocked kernel {i}."""'
            "\n    return x\n\n\n"
            for i in range(400)
        ),
        encoding="utf-8",
    )
    proc = subprocess.Popen(
        [str(STACKMAP), "ingest", str(repo)],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, preexec_fn=_limits,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 300
        while not (store / "index-dirty").exists():
            assert proc.poll() is None, "the ingest ended before it marked the index dirty"
            assert time.monotonic() < deadline, "no index-dirty marker within 300 s"
            time.sleep(0.002)
        proc.kill()
        assert proc.wait(60) == -9
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(60)
    assert (store / "current").read_text(encoding="utf-8") == version  # the previous map
    assert node_ids(repo) == before
    hits, err = vector_hits(repo, "tile the input along an axis")
    assert err == (
        "warning: semantic search is off: an ingest was interrupted while updating the vector"
        " index; run `stackmap ingest` to bring it up to date\n"
    )
    result = stackmap("ingest", str(repo), timeout=600)
    assert result.returncode == 0, result.stderr
    assert not (store / "index-dirty").exists()
    added = node_ids(repo) - before
    assert len([n for n in added if n.rpartition(".")[2].startswith("tile_")]) == 400
    hits, err = vector_hits(repo, "tile the input along axis 7 for blocked kernel 7")
    assert err == "" and hits[0]["match"] == "vector"
