"""The KMD benchmark: fence latency and large-GEMM throughput through the driver, each against a
baseline measured in the same run (a bare thread round trip; the array library's own matmul)."""

from __future__ import annotations

import threading
import time
from typing import Any

import numpy as np

from stack.kmd import blob as B
from stack.kmd.device import KmdDevice
from stack.kmd.dtypes import DType
from stack.kmd.kernels import blas
from stack.kmd.kernels.ids import KernelId


def _percentiles(samples: list[float]) -> tuple[float, float]:
    us = np.asarray(samples) * 1e6
    return float(np.percentile(us, 50)), float(np.percentile(us, 99))


def thread_round_trip(iters: int) -> list[float]:
    """Baseline: one Event handoff to a worker thread and one back, per iteration."""
    go, back = threading.Event(), threading.Event()
    stop = False

    def worker() -> None:
        while True:
            go.wait()
            go.clear()
            if stop:
                return
            back.set()

    t = threading.Thread(target=worker, daemon=True)
    t.start()
    samples = []
    for _ in range(iters):
        t0 = time.perf_counter()
        go.set()
        back.wait()
        back.clear()
        samples.append(time.perf_counter() - t0)
    stop = True
    go.set()
    t.join()
    return samples


def fence_latency(dev: KmdDevice, iters: int) -> list[float]:
    """Submit one tiny kernel and wait for its fence, ``iters`` times."""
    ctx = dev.create_context()
    q, f = dev.create_queue(ctx), dev.create_fence(ctx)
    va = dev.alloc(ctx, 64)
    p = B.TensorParam(va, 64, DType.F32, (16,))
    blob = B.encode(B.InstructionBlob(KernelId.RELU, (p, p)))
    samples = []
    for i in range(1, iters + 1):
        t0 = time.perf_counter()
        dev.submit(ctx, q, [blob], signal=(f, i))
        dev.wait_fence(ctx, f, i, timeout_s=60)
        samples.append(time.perf_counter() - t0)
    dev.destroy_context(ctx)
    return samples[iters // 10 :]  # drop warm-up


def gemm_throughput(dev: KmdDevice, n: int, reps: int) -> dict[str, float]:
    """Driver and reference GFLOP/s over ``reps`` interleaved runs on the same data: best run
    (robust to other load on the machine) and median."""
    ctx = dev.create_context()
    q, f = dev.create_queue(ctx), dev.create_fence(ctx)
    rng = np.random.default_rng(0)
    a = rng.standard_normal((n, n), dtype=np.float32)
    b = rng.standard_normal((n, n), dtype=np.float32)
    nbytes = a.nbytes
    va, vb, vy = (dev.alloc(ctx, nbytes) for _ in range(3))
    dev.write(ctx, va, a)
    dev.write(ctx, vb, b)
    params = tuple(B.TensorParam(v, nbytes, DType.F32, (n, n)) for v in (va, vb, vy))
    blob = B.encode(B.InstructionBlob(KernelId.GEMM, params))
    xp, ra, rb, sync = _reference_arrays(dev.backend, a, b)
    rc = xp.empty_like(ra)
    t_drv, t_ref = [], []
    for i in range(reps + 1):
        t0 = time.perf_counter()
        value = i + 1
        dev.submit(ctx, q, [blob], signal=(f, value))
        dev.wait_fence(ctx, f, value, timeout_s=600)
        t1 = time.perf_counter()
        xp.matmul(ra, rb, out=rc)
        sync()
        t2 = time.perf_counter()
        if i:  # the first round warms both paths
            t_drv.append(t1 - t0)
            t_ref.append(t2 - t1)
    y = dev.read_array(ctx, vy, (n, n), DType.F32)
    ref = rc if xp is np else rc.get()
    if not np.allclose(y, ref, rtol=1e-3, atol=1e-2):
        raise AssertionError("driver GEMM disagrees with the reference matmul")
    dev.destroy_context(ctx)
    flops = 2.0 * n**3 / 1e9
    return {
        "gemm_gflops": flops / min(t_drv),
        "gemm_ref_gflops": flops / min(t_ref),
        "gemm_gflops_median": flops / float(np.median(t_drv)),
        "gemm_ref_gflops_median": flops / float(np.median(t_ref)),
    }


def _reference_arrays(backend: str, a: np.ndarray, b: np.ndarray) -> tuple[Any, Any, Any, Any]:
    if backend == "numpy":
        return np, a, b, lambda: None
    from stack.kmd.kernels.cupy_backend import cupy_module

    cp = cupy_module()
    return cp, cp.asarray(a), cp.asarray(b), cp.cuda.runtime.deviceSynchronize


def run(
    backend: str | None = None, *, size: int = 2048, reps: int = 5, iters: int = 2000
) -> dict[str, Any]:
    """Every figure of ``refstack bench kmd`` as one JSON-ready record."""
    with KmdDevice(backend) as dev:
        p50, p99 = _percentiles(fence_latency(dev, iters))
        b50, b99 = _percentiles(thread_round_trip(iters))
        gemm = {k: round(v, 2) for k, v in gemm_throughput(dev, size, reps).items()}
        name = dev.backend
    return {
        "backend": name,
        "blas_threads": blas.threads() if name == "numpy" else None,
        "fence_latency_us_p50": round(p50, 2),
        "fence_latency_us_p99": round(p99, 2),
        "thread_round_trip_us_p50": round(b50, 2),
        "thread_round_trip_us_p99": round(b99, 2),
        "fence_latency_over_round_trip": round(p50 / b50, 2),
        "gemm_size": size,
        "gemm_reps": reps,
        **gemm,
        "gemm_ratio": round(gemm["gemm_gflops"] / gemm["gemm_ref_gflops"], 3),
        "gemm_goal_ratio": 0.9,
    }
