"""``stackmap scenario perf [MODEL]``: where time goes, layer by layer.

Without a model: per layer, the checklist of places that decide performance, with their code
locations, found on the map by what the definitions are named for — format conversions,
fusion decisions, scheduling, submission, synchronisation points.

With a model: the reference stack's own benchmark command runs it as a subprocess under
Python's profiler (``python -m cProfile -o FILE <command> MODEL``; the map tool never imports
the stack), and the profile's self time is summed per layer by the file each function lives
in, beside the checklist; time spent outside the layers (the ONNX reference, the interpreter)
is reported as ``outside``.
"""

from __future__ import annotations

import pstats
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mapper.errors import MapperError
from mapper.impact.mapview import MapView
from mapper.model import NodeKind
from mapper.scenarios import vocab

CHECKLIST: dict[str, frozenset[str]] = {
    "format conversions": frozenset(
        {
            "convert",
            "conversion",
            "layout",
            "transpose",
            "cast",
            "pack",
            "unpack",
            "encode",
            "decode",
            "serialize",
            "deserialize",
            "nchw",
            "nhwc",
            "quantize",
            "dequantize",
        }
    ),
    "fusion decisions": frozenset({"fuse", "fusion", "fused", "fold", "folding"}),
    "scheduling": frozenset(
        {"schedule", "scheduler", "stream", "streams", "lane", "lanes", "order", "plan"}
    ),
    "submission": frozenset({"submit", "ring", "doorbell", "launch", "dispatch", "enqueue"}),
    "synchronisation points": frozenset(
        {"wait", "fence", "sync", "synchronize", "barrier", "signal", "event", "join"}
    ),
}
_CODE = ("function", "method")


class PerfError(MapperError):
    """The profiled run could not be made or read."""


@dataclass(frozen=True, slots=True)
class Spot:
    node: str
    path: str | None
    line: int | None

    def to_json(self) -> dict[str, Any]:
        return {"node": self.node, "at": f"{self.path}:{self.line}"}


@dataclass(frozen=True, slots=True)
class LayerPerf:
    layer: str
    checklist: tuple[tuple[str, tuple[Spot, ...]], ...]
    seconds: float | None = None  # self time in the profiled run
    hottest: tuple[tuple[str, float], ...] = ()  # (function at path:line, self seconds)

    def to_json(self) -> dict[str, Any]:
        return {
            "layer": self.layer,
            "checklist": {k: [s.to_json() for s in v] for k, v in self.checklist},
            "seconds": self.seconds,
            "hottest": [{"at": a, "seconds": round(s, 6)} for a, s in self.hottest],
        }


@dataclass(frozen=True, slots=True)
class PerfWalk:
    model: str | None
    layers: tuple[LayerPerf, ...]
    outside_seconds: float | None = None
    command: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "model": self.model,
            "layers": [x.to_json() for x in self.layers],
            "outside_seconds": self.outside_seconds,
            "command": list(self.command),
        }


def checklist(view: MapView, layer: str) -> tuple[tuple[str, tuple[Spot, ...]], ...]:
    found: dict[str, list[Spot]] = {k: [] for k in CHECKLIST}
    for node in view.nodes(NodeKind.SYMBOL, layer):
        if node.get("symbol_kind") not in _CODE:
            continue
        ws = set(vocab.words(vocab.short_name(node)))
        for item, words in CHECKLIST.items():
            if ws & words:
                found[item].append(Spot(node.id, node.path, node.line))
    return tuple((k, tuple(sorted(v, key=lambda s: s.node))) for k, v in found.items())


def profile(root: Path, command: list[str], *, timeout: float = 600) -> pstats.Stats:
    """Run ``command`` under cProfile in a subprocess at ``root``; its statistics."""
    with tempfile.TemporaryDirectory(prefix="stackmap-perf-") as tmp:
        out = Path(tmp) / "run.prof"
        argv = [sys.executable, "-m", "cProfile", "-o", str(out), *command]
        try:
            proc = subprocess.run(argv, cwd=root, capture_output=True, timeout=timeout, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise PerfError(f"the profiled run could not finish: {exc}") from exc
        if proc.returncode != 0 or not out.is_file():
            tail = proc.stderr.decode("utf-8", "replace").strip().splitlines()
            raise PerfError(f"the profiled run failed: {tail[-1] if tail else proc.returncode}")
        return pstats.Stats(str(out))


def walk_perf(view: MapView, model: str | None = None, *, runs: int = 5) -> PerfWalk:
    """The checklist per layer and, for ``model``, the measured self time per layer."""
    layers = view.layers()
    if model is None:
        return PerfWalk(None, tuple(LayerPerf(x, checklist(view, x)) for x in layers))
    refstack = shutil.which("refstack", path=str(Path(sys.executable).parent))
    if refstack is None:
        raise PerfError("the reference stack's `refstack` command is not installed here")
    command = [refstack, "bench", "model", model, "--json", "--runs", str(runs)]
    stats = profile(view.config.root, command)
    root = str(view.config.root.resolve()) + "/"
    per_layer: dict[str, float] = {x: 0.0 for x in layers}
    hottest: dict[str, list[tuple[str, float]]] = {x: [] for x in layers}
    outside = 0.0
    for (filename, line, func), row in stats.stats.items():  # type: ignore[attr-defined]
        self_s = float(row[2])
        rel = filename[len(root) :] if filename.startswith(root) else None
        layer = view.config.layer_of(rel) if rel else None
        if layer is None:
            outside += self_s
            continue
        per_layer[layer] += self_s
        hottest[layer].append((f"{func} {rel}:{line}", self_s))
    out = []
    for x in layers:
        top = tuple(sorted(hottest[x], key=lambda t: -t[1])[:5])
        out.append(LayerPerf(x, checklist(view, x), round(per_layer[x], 6), top))
    return PerfWalk(model, tuple(out), round(outside, 6), tuple(command))
