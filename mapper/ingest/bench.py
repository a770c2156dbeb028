"""``stackmap bench ingest``: ingest timings against the tree-sitter parse floor, same run.

Runs on a private copy of the files the ingest reads (the repository is never written): the
floor is a bare tree-sitter parse of the code files, in this process, alternated with a full
ingest without embeddings (so that a change in a shared machine's load weighs on both sides of
the ratio); then a full ingest with embeddings into an empty store, and a re-ingest after
appending one function to one code file. Each figure is the best of ``repeat`` runs (the
embedded full ingest and the incremental run once each: they depend on the store's state).
``*_cpu_s`` are the floor and the ingest without embeddings in CPU time, of this process and
of the forked parse child (:mod:`mapper.ingest.parallel`), steadier than wall time on a busy
machine. ``full_noembed_1proc_*`` is the same ingest with the fork turned off (one process),
also alternated with the floor.
Synchronous; takes seconds to minutes (embedding dominates).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import resource
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from mapper.config import CONFIG_FILE, StackmapConfig, load_config
from mapper.ingest import ingest, parallel, treesitter
from mapper.ingest.code import sniff_language
from mapper.ingest.scan import Category, scan
from mapper.progress import step

GOAL = 3.0  # full ingest without embeddings over the parse floor

_PROBE = {
    "python": "\n\ndef _bench_probe_added() -> int:\n    return 1\n",
    "c": "\nstatic int bench_probe_added(void) { return 1; }\n",
}


def _copy(config: StackmapConfig, dest: Path) -> list[str]:
    files = scan(config).files
    for name in (CONFIG_FILE, "pyproject.toml"):
        if (config.root / name).is_file():
            shutil.copy2(config.root / name, dest / name)
    for f in files:
        target = dest / f.path
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(f.data)
    return [f.path for f in files]


def _parse_floor(config: StackmapConfig) -> tuple[float, float, int, int]:
    """(wall s, CPU s) of a bare tree-sitter parse of the code and test files, their count and
    lines (files in a language tree-sitter does not parse here, operator descriptors in JSON,
    are left out)."""
    parsed = (Category.CODE, Category.TEST)
    files = [f for f in scan(config).files if f.category in parsed]
    tagged = [(f, sniff_language(f.path, f.data) or f.language) for f in files]
    code = [f for f, lang in tagged if lang in treesitter.supported()]
    langs = [lang for _, lang in tagged if lang in treesitter.supported()]
    for lang in set(langs):
        treesitter.parser(lang)
    start, cpu = time.perf_counter(), time.process_time()
    for f, lang in zip(code, langs, strict=True):
        treesitter.parse(lang, f.data)
    wall, cpu = time.perf_counter() - start, time.process_time() - cpu
    loc = sum(f.data.count(b"\n") for f in code)
    return wall, cpu, len(code), loc


def _timed(root: Path, config: StackmapConfig, **kw: Any) -> float:
    return _timed_both(root, config, **kw)[0]


def _cpu() -> float:
    """CPU seconds of this process and of its children that have ended."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def _timed_both(
    root: Path, config: StackmapConfig, fork: bool = True, **kw: Any
) -> tuple[float, float]:
    """(wall s, CPU s of this process and its children) of one ingest; ``fork=False`` parses
    in this process only."""
    with _fork_switch(fork):
        start, cpu = time.perf_counter(), _cpu()
        ingest(root, config, progress=False, **kw)
        return time.perf_counter() - start, _cpu() - cpu


@contextlib.contextmanager
def _fork_switch(on: bool) -> Iterator[None]:
    was = os.environ.get(parallel.ENV)
    if not on:
        os.environ[parallel.ENV] = "0"
    try:
        yield
    finally:
        if was is None:
            os.environ.pop(parallel.ENV, None)
        else:
            os.environ[parallel.ENV] = was


def bench_ingest(root: Path, repeat: int = 3, embed: bool = True) -> dict[str, Any]:
    source = load_config(root)
    with tempfile.TemporaryDirectory(prefix="stackmap-bench-") as tmp:
        work = Path(tmp) / "repo"
        work.mkdir()
        paths = _copy(source, work)
        config = dataclasses.replace(load_config(work), root=work.resolve())
        floors: list[tuple[float, float, int, int]] = []
        noembeds: list[tuple[float, float]] = []
        inprocess: list[tuple[float, float]] = []
        with step(f"bench ingest: parse floor and full ingest without embeddings ({repeat} runs)"):
            for _ in range(repeat):  # alternated, so a change in the machine's load hits all
                floors.append(_parse_floor(config))
                noembeds.append(_timed_both(work, config, embed=False, full=True))
                inprocess.append(_timed_both(work, config, fork=False, embed=False, full=True))
        _, _, files, loc = floors[0]
        floor, floor_cpu = min(f[0] for f in floors), min(f[1] for f in floors)
        noembed, noembed_cpu = min(n[0] for n in noembeds), min(n[1] for n in noembeds)
        one, one_cpu = min(n[0] for n in inprocess), min(n[1] for n in inprocess)
        result: dict[str, Any] = {
            "files": files,
            "loc": loc,
            "parse_only_s": round(floor, 4),
            "full_noembed_s": round(noembed, 4),
            "full_noembed_over_parse": round(noembed / floor, 2) if floor else None,
            "parse_only_cpu_s": round(floor_cpu, 4),
            "full_noembed_cpu_s": round(noembed_cpu, 4),
            "full_noembed_over_parse_cpu": round(noembed_cpu / floor_cpu, 2) if floor_cpu else None,
            "full_noembed_1proc_s": round(one, 4),
            "full_noembed_1proc_over_parse": round(one / floor, 2) if floor else None,
            "full_noembed_1proc_cpu_s": round(one_cpu, 4),
            "forked_parse": parallel.enabled(scan(config).files),
            "goal_over_parse": GOAL,
        }
        if embed:
            shutil.rmtree(config.store_path, ignore_errors=True)
            with step("bench ingest: full ingest with embeddings"):
                full = _timed(work, config, embed=True, full=True)
            target = _probe_target(config, paths)
            incremental = None
            if target is not None:
                probe = _PROBE["python" if target.endswith(".py") else "c"]
                with (work / target).open("a", encoding="utf-8") as fh:
                    fh.write(probe)
                with step(f"bench ingest: incremental ingest of {target}"):
                    incremental = _timed(work, config, embed=True)
            result.update(
                {
                    "full_s": round(full, 4),
                    "incremental_1file_s": round(incremental, 4)
                    if incremental is not None
                    else None,
                    "incremental_file": target,
                    "incremental_goal_s": round(max(2.0, 0.05 * full), 4),
                }
            )
        return result


def _probe_target(config: StackmapConfig, paths: list[str]) -> str | None:
    """The median-sized layered code file (Python or C family)."""
    code = [
        p for p in paths if config.layer_of(p) and p.endswith((".py", ".c", ".cc", ".cpp", ".cu"))
    ]
    if not code:
        return None
    code.sort(key=lambda p: ((config.root / p).stat().st_size, p))
    return code[len(code) // 2]
