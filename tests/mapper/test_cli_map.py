"""The map's commands end to end through the console script (no embeddings: fast)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from mapper.config import load_config

BIN = Path(sys.executable).parent


def _run(*argv: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(BIN / "stackmap"), *argv], capture_output=True, text=True, timeout=120, cwd=cwd
    )


def test_ingest_search_show_ls(minirepo: Path) -> None:
    result = _run("ingest", str(minirepo), "--no-embed", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["files"]["code"] == 8 and report["embedded"] is False
    assert {"node": "component:driver.mini", "missing": ["upstream", "downstream"]}.items() <= {
        k: v for h in report["holes"] if h["node"] == "component:driver.mini" for k, v in h.items()
    }.items()
    assert set(report["timings"]) >= {"scan", "parse", "graph", "save", "total"}

    hits = json.loads(_run("search", "FusePass", "-C", str(minirepo), "--json").stdout)
    assert hits[0]["id"] == "symbol:compiler.passes.FusePass" and hits[0]["match"] == "exact"
    assert hits[0]["path"] == "compiler/passes.py" and hits[0]["line"] == 18
    lexical = json.loads(_run("search", "lunch menu", "-C", str(minirepo), "--json").stdout)
    assert lexical[0]["id"].startswith("doc:notes/lunch.md") and lexical[0]["match"] == "lexical"

    shown = json.loads(_run("show", "component:runtime.core", "-C", str(minirepo), "--json").stdout)
    by_edge = {(e["kind"], e["to"]): e["evidence"] for e in shown["out"]}
    assert by_edge[("calls", "component:driver.mini_drv")] == [  # declared, then observed
        {
            "kind": "doc_front_matter",
            "path": "docs/runtime/core.md",
            "line": 1,
            "confidence": 1.0,
            "detail": "",
        },
        {
            "kind": "code_reference",
            "path": "runtime/runtime.cpp",
            "line": 7,
            "confidence": 0.8,
            "detail": "",
        },
        {
            "kind": "code_reference",
            "path": "runtime/runtime.cpp",
            "line": 12,
            "confidence": 0.8,
            "detail": "",
        },
    ]
    assert [e["kind"] for e in by_edge[("contains", "file:runtime/runtime.cpp")]] == [
        "doc_front_matter"
    ]
    text = _run("show", "component:runtime.core", "-C", str(minirepo)).stdout
    assert (
        "  -> calls      component:driver.mini_drv  docs/runtime/core.md:1 (doc_front_matter)\n"
        "                                          runtime/runtime.cpp:7 (code_reference) [0.8]\n"
    ) in text
    paths = json.loads(
        _run(
            "path",
            "compiler.passes",
            "runtime_driver.alloc_pages",
            "-k",
            "2",
            "-C",
            str(minirepo),
            "--json",
        ).stdout
    )
    assert paths["from"] == "component:compiler.passes"
    assert len(paths["paths"]) == 2
    assert paths["paths"][0]["nodes"] == [
        "component:compiler.passes",
        "component:runtime.core",
        "interface:runtime_driver.alloc_pages",
    ]
    assert [h["citation"]["kind"] for h in paths["paths"][0]["hops"]] == [
        "doc_front_matter",
        "code_reference",
    ]
    printed = _run("path", "compiler.passes", "runtime_driver.alloc_pages", "-C", str(minirepo))
    assert printed.stdout.splitlines()[1:] == [
        "  component:compiler.passes -[calls]-> component:runtime.core"
        "  docs/runtime/core.md:1 (doc_front_matter)",
        "  component:runtime.core -[consumes]-> interface:runtime_driver.alloc_pages"
        "  runtime/runtime.cpp:7 (code_reference)",
    ]
    layers = json.loads(_run("ls", "--kind", "layer", "-C", str(minirepo), "--json").stdout)
    assert [r["id"] for r in layers] == ["layer:compiler", "layer:runtime", "layer:driver"]
    text = _run("ls", "--kind", "component", "--layer", "driver", "-C", str(minirepo)).stdout
    assert "component:driver.mini  [driver]  proto/mini.proto:1  HOLE: missing upstream" in text
    short = json.loads(
        _run("show", "runtime_driver.free_pages", "-C", str(minirepo), "--json").stdout
    )
    assert short["id"] == "interface:runtime_driver.free_pages"
    missing = _run("show", "symbol:nope", "-C", str(minirepo))
    assert missing.returncode == 2 and "no node 'symbol:nope'" in missing.stderr


def test_commands_without_a_map_fail_cleanly(minirepo: Path) -> None:
    result = _run("search", "x", "-C", str(minirepo), "--json")
    assert result.returncode == 2 and json.loads(result.stdout)["error"] == "MapNotIngested"


def test_init_proposes_layers_from_folders(tmp_path: Path) -> None:
    for folder in ("src/compiler", "src/runtime", "drivers/kmd", "hal", "docs", "umd"):
        (tmp_path / folder).mkdir(parents=True)
    (tmp_path / "hal" / "README.md").write_text("# HAL\n\nRegister access for every chip.\n")
    printed = _run("init", str(tmp_path))
    assert printed.returncode == 0 and not (tmp_path / "stackmap.toml").exists()
    assert _run("init", str(tmp_path), "--write").returncode == 0
    cfg = load_config(tmp_path)
    assert [(layer.id, layer.paths) for layer in cfg.layers] == [
        ("compiler", ("src/compiler/**",)),
        ("runtime", ("src/runtime/**",)),
        ("umd", ("umd/**",)),
        ("hal", ("hal/**",)),
        ("kmd", ("drivers/**",)),
    ]
    assert cfg.layer("hal").description == "Register access for every chip."
    assert cfg.docs == ("docs",) and [r.id for r in cfg.roles] == ["compiler", "runtime", "driver"]
    assert _run("init", str(tmp_path), "--write").returncode == 2  # never overwrites


def test_status_reads_folders_from_the_config(minirepo: Path) -> None:
    before = json.loads(_run("status", str(minirepo), "--json").stdout)
    assert before["layers"] == ["compiler", "runtime", "driver"]
    assert before["contracts"] == [
        "contracts/compiler_runtime.yaml",
        "contracts/runtime_driver.yaml",
    ]
    assert (before["docs"], before["doc_pages"]) == (["docs", "notes"], 6)
    assert before["map_version"] is None and before["map"].startswith("unusable: no map")
    _run("ingest", str(minirepo), "--no-embed")
    after = json.loads(_run("status", str(minirepo), "--json").stdout)
    assert after["map_version"] == 1 and after["map"].endswith("versions/1/map.sqlite")
    broken = _run("status", str(minirepo / "docs"))
    assert broken.returncode == 2 and broken.stderr.startswith("error: ")
