"""The auto-tuner: measure a kernel's tunable launch parameters, keep the best.

:func:`tune` takes a kernel (``GEMM``, ``CONV2D``/``Conv``, ``MATMUL``) and the shapes of its
inputs, builds the kernel call the UMD would make, and for every candidate configuration —
each value of the descriptor's tunable parameters (clamped to what the launch can use) and the
UMD's own default — encodes the launch, warms it up, then times submit-to-fence on the device
``iters`` times. On the CPU the parameter is ``tiles`` (grid[0], :mod:`stack.umd.launch_cpu`);
on a GPU it is ``block``, the tile edge of the hand kernel for GEMM and CONV2D against the
library path (block 0, the default; :mod:`stack.umd.launch_gpu`), the block sizes the device
cannot run (threads or shared memory per block) left out with their reason. Candidates are
timed in interleaved rounds, so a change of machine load during the run hits every candidate
alike. The best is the lowest p95 (the default wins ties); its
gain is the default's p95 over the best's. The result is kept in the tuning database under
(kernel, shape class, device), where the UMD finds it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from stack.kmd import DType, KernelId, KmdDevice
from stack.kmd.blob import InstructionBlob, LaunchConfig, TensorParam, encode
from stack.umd.errors import InvalidRequestError
from stack.umd.launch_cpu import launch_cpu
from stack.umd.launch_gpu import TILED, block_candidates, launch_gpu
from stack.umd.operators import registry
from stack.umd.plan import KernelCall, Operand
from stack.umd.templates import CPU_TARGET, default_templates
from stack.umd.tuning import TuningDatabase, TuningRecord, device_key, shape_class

ALIASES = {"CONV": "CONV2D", "GEMM": "GEMM", "MATMUL": "MATMUL", "CONV2D": "CONV2D"}
DEFAULT_SHAPES: dict[KernelId, tuple[tuple[int, ...], ...]] = {
    KernelId.GEMM: ((512, 512), (512, 512)),
    KernelId.MATMUL: ((512, 512), (512, 512)),
    KernelId.CONV2D: ((1, 64, 56, 56), (64, 64, 3, 3)),
}


@dataclass(frozen=True, slots=True)
class Candidate:
    """One configuration and its measured times (seconds)."""

    params: Mapping[str, int]
    p50_s: float
    p95_s: float
    default: bool


@dataclass(frozen=True, slots=True)
class TuneReport:
    """What a tuning run measured and kept."""

    kernel: str
    shapes: tuple[tuple[int, ...], ...]
    shape_class: str
    device: str
    candidates: tuple[Candidate, ...]
    best: Candidate
    default: Candidate
    iters: int
    #: configurations the device cannot run, each with the reason
    invalid: tuple[tuple[Mapping[str, int], str], ...] = ()

    @property
    def gain(self) -> float:
        """The default's p95 over the best's (>= 1: the default is a candidate)."""
        return self.default.p95_s / self.best.p95_s

    def to_dict(self) -> dict[str, Any]:
        def cand(c: Candidate) -> dict[str, Any]:
            return {
                "params": dict(c.params),
                "p50_ms": c.p50_s * 1e3,
                "p95_ms": c.p95_s * 1e3,
                "default": c.default,
                "best": c is self.best,
            }

        return {
            "kernel": self.kernel,
            "shapes": [list(s) for s in self.shapes],
            "shape_class": self.shape_class,
            "device": self.device,
            "iters": self.iters,
            "candidates": [cand(c) for c in self.candidates],
            "best": dict(self.best.params),
            "default": dict(self.default.params),
            "gain": self.gain,
            "invalid": [{"params": dict(p), "reason": why} for p, why in self.invalid],
        }


def kernel_id_of(name: str) -> KernelId:
    """``gemm``, ``Conv``, ``CONV2D`` … → the kernel id; InvalidRequestError lists the tunable."""
    kid = ALIASES.get(name.upper())
    if kid is None:
        known = ", ".join(k.name for k in DEFAULT_SHAPES)
        raise InvalidRequestError(f"cannot tune {name!r}; tunable kernels: {known}", field="kernel")
    return KernelId[kid]


def make_call(kid: KernelId, shapes: Sequence[tuple[int, ...]]) -> KernelCall:
    """The float32 call the UMD would make for ``kid`` on inputs of ``shapes``."""
    want = len(DEFAULT_SHAPES[kid])
    if len(shapes) != want or any(
        len(s) != len(d) for s, d in zip(shapes, DEFAULT_SHAPES[kid], strict=False)
    ):
        ranks = " and ".join(f"{len(d)}-D" for d in DEFAULT_SHAPES[kid])
        raise InvalidRequestError(
            f"{kid.name} takes {want} input shapes ({ranks}), got {list(shapes)}", field="shape"
        )
    attrs: dict[str, Any] = {}
    if kid is KernelId.CONV2D:
        (n, c, h, w), (m, cw, kh, kw) = shapes
        if cw != c:
            raise InvalidRequestError(f"W has {cw} input channels, X has {c}", field="shape")
        attrs = {
            "pad_top": kh // 2,
            "pad_bottom": kh // 2,
            "pad_left": kw // 2,
            "pad_right": kw // 2,
        }
        out: tuple[int, ...] = (n, m, h + 2 * (kh // 2) - kh + 1, w + 2 * (kw // 2) - kw + 1)
    else:
        (mm, k), (k2, nn) = shapes
        if k != k2:
            raise InvalidRequestError(
                f"A is {shapes[0]} and B is {shapes[1]}: inner dims differ", field="shape"
            )
        out = (mm, nn)
        attrs = {"beta": 0.0} if kid is KernelId.GEMM else {}
    ops = [Operand(i, tuple(s), DType.F32) for i, s in enumerate(shapes)]
    ops.append(Operand(len(shapes), out, DType.F32))
    return KernelCall(kid, tuple(ops), len(shapes), attrs)


def candidates_for(call: KernelCall, threads: int) -> tuple[tuple[dict[str, int], bool], ...]:
    """Every CPU configuration to time: the descriptor's tile counts and the UMD default."""
    desc = registry().descriptor(call.kernel_id.name)
    default = {"tiles": launch_cpu(call, threads).grid[0]}
    seen = {default["tiles"]: True}
    for p in desc.tunable:
        if p.name == "tiles":
            for v in p.values:
                t = launch_cpu(call, threads, tiles=v).grid[0]
                seen.setdefault(t, False)
    return tuple(({"tiles": t}, is_default) for t, is_default in sorted(seen.items()))


def tune(
    kernel: str,
    shapes: Sequence[tuple[int, ...]] | None = None,
    *,
    device: KmdDevice,
    db: TuningDatabase | None = None,
    warmup: int = 3,
    iters: int = 15,
    progress: Callable[[str], None] | None = None,
) -> TuneReport:
    """Tune ``kernel`` on ``device`` (see the module docstring); keep the best in ``db`` (and
    save it) when given."""
    kid = kernel_id_of(kernel)
    caps = device.capabilities()
    gpu = device.backend != CPU_TARGET
    if gpu and kid not in TILED:
        known = ", ".join(k.name for k in TILED)
        raise InvalidRequestError(
            f"on {device.backend} {kid.name} is a library call with no launch parameter to tune; "
            f"tunable there: {known}",
            field="kernel",
        )
    call = make_call(kid, tuple(shapes) if shapes else DEFAULT_SHAPES[kid])
    invalid: tuple[tuple[dict[str, int], str], ...] = ()
    if gpu:
        values = next(
            p.values for p in registry().descriptor(kid.name).tunable if p.name == "block"
        )
        configs, invalid = block_candidates(call, values, caps)
    else:
        configs = candidates_for(call, device.threads)
    rng = np.random.default_rng(0)
    ctx = device.create_context()
    try:
        queue, fence = device.create_queue(ctx), device.create_fence(ctx)
        params = []
        for op in call.params:
            va = device.alloc(ctx, max(op.nbytes, 1))
            if op.ref < call.n_in:
                device.write(ctx, va, rng.standard_normal(op.shape, dtype=np.float32))
            params.append(TensorParam(va, op.nbytes, op.dtype, op.shape))
        ints, floats = default_templates().get(kid).body(call)
        blobs = [
            encode(
                InstructionBlob(
                    kid, tuple(params), _launch(call, device.threads, cfg), ints, floats
                )
            )
            for cfg, _ in configs
        ]
        value = 0
        times: list[list[float]] = [[] for _ in configs]
        for rnd in range(warmup + iters):
            for i, blob in enumerate(blobs):
                value += 1
                t0 = time.perf_counter()
                device.submit(ctx, queue, [blob], signal=(fence, value))
                device.wait_fence(ctx, fence, value, timeout_s=600)
                if rnd >= warmup:
                    times[i].append(time.perf_counter() - t0)
            if progress is not None:
                progress(f"round {rnd + 1}/{warmup + iters}")
    finally:
        device.destroy_context(ctx)
    cands = tuple(
        Candidate(cfg, float(np.percentile(t, 50)), float(np.percentile(t, 95)), is_default)
        for (cfg, is_default), t in zip(configs, times, strict=True)
    )
    best = min(cands, key=lambda c: (c.p95_s, not c.default))
    default = next(c for c in cands if c.default)
    report = TuneReport(
        kid.name,
        tuple(p.shape for p in call.ins),
        shape_class(call),
        device_key(device.backend, device.threads, caps),
        cands,
        best,
        default,
        iters,
        invalid,
    )
    if db is not None:
        db.put(
            TuningRecord(
                report.kernel,
                report.shape_class,
                report.device,
                dict(best.params),
                best.p95_s,
                dict(default.params),
                default.p95_s,
                iters,
            )
        )
        db.save()
    return report


def _launch(call: KernelCall, threads: int, cfg: Mapping[str, int]) -> LaunchConfig:
    if "block" in cfg:
        return launch_gpu(call, cfg["block"])
    return launch_cpu(call, threads, tiles=cfg["tiles"])
