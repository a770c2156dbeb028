"""Measurements behind ``refstack bench umd``: translation in process and over gRPC.

In process: the p50 of :meth:`UmdSession.translate` on a cache hit and on a miss (the cache is
cleared before each timed miss), for the seed's MatMul (64x128x64, here a GEMM with bias+ReLU).

Over gRPC, against a server in a child process (client and server do not share a GIL), timed in
rotation so that machine noise hits the figures alike:

* ``grpc_echo_us_p50`` — ``Echo``, a trivial unary RPC on the same server: the transport floor;
* ``grpc_translate_us_p50`` — ``TranslateOp`` (pre-built request, ``translate_only``): the
  translation's cost on top of the floor;
* ``single_op_rtt_us`` / ``batch64_per_op_us`` — ``UmdClient.translate`` of one op, and
  ``UmdClient.translate_batch`` of 64 ops (same shapes, 64 distinct output buffers, like a
  model's repeated layers) divided by 64 (both ``submit=False``);
* the ``*_submit_*`` figures: the same calls also submitting. With the NumPy backend the
  "device" executes the kernels on the server's own CPU, so these include simulated device
  time competing with the server for the two cores — not a translation cost.

Figures are microseconds (medians of ``n`` runs); the seed's figures and the goals stand beside.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from stack.kmd.dtypes import DType
from stack.umd.driver import Umd
from stack.umd.ops import OpKind, OpRequest, TensorDesc

#: The seed's figures (seed 000 §6.1, §6.2), microseconds.
SEED = {
    "seed_translate_hit_us": 20.0,
    "seed_translate_miss_us": 300.0,
    "seed_single_op_rtt_us": 660.0,
    "seed_batch_per_op_us": 45.0,
}
#: The goals, as ratios or bounds checked against figures of the same run.
GOALS = {
    "translate_hit_us_p50_max": 10.0,
    "translate_miss_us_p50_max": 150.0,
    "grpc_translate_over_echo_max": 1.25,
    "batch64_per_op_over_single_max": 1 / 20,
}
F = DType.F32


def p50(fn: Callable[[], Any], n: int, before: Callable[[], Any] | None = None) -> float:
    """Median wall time of ``fn`` in microseconds (``before`` runs untimed before each call)."""
    times = []
    for _ in range(n):
        if before is not None:
            before()
        t0 = time.perf_counter_ns()
        fn()
        times.append(time.perf_counter_ns() - t0)
    return statistics.median(times) / 1000


def _gemm(alloc: Callable[[int], int]) -> OpRequest:
    m, k, n = 64, 128, 64  # the seed's MatMul example
    a, b, c, y = alloc(m * k * 4), alloc(k * n * 4), alloc(n * 4), alloc(m * n * 4)
    return OpRequest.make(
        OpKind.GEMM,
        [TensorDesc(a, (m, k), F), TensorDesc(b, (k, n), F), TensorDesc(c, (n,), F)],
        [TensorDesc(y, (m, n), F)],
        relu=1,
    )


def in_process(n: int = 2000) -> dict[str, float]:
    with Umd("numpy") as umd:
        s = umd.create_session()
        req = _gemm(s.alloc)
        s.translate(req)
        hit = p50(lambda: s.translate(req), n)
        miss = p50(lambda: s.translate(req), max(50, n // 10), before=umd.cache.clear)
    return {"translate_hit_us_p50": hit, "translate_miss_us_p50": miss}


def interleaved(fns: dict[str, Callable[[], Any]], n: int) -> dict[str, float]:
    """Median microseconds of each call, timed in rotation so that noise hits all alike."""
    times: dict[str, list[int]] = {k: [] for k in fns}
    for _ in range(n):
        for k, fn in fns.items():
            t0 = time.perf_counter_ns()
            fn()
            times[k].append(time.perf_counter_ns() - t0)
    return {k: statistics.median(v) / 1000 for k, v in times.items()}


def over_grpc(n: int = 1000, batch: int = 64) -> dict[str, float]:
    from stack.umd.service import umd_pb2 as pb
    from stack.umd.service.client import UmdClient
    from stack.umd.service.convert import request_to_proto
    from stack.umd.service.serve import child_server

    with child_server("--backend", "numpy") as target, UmdClient(target) as c:
        req = _gemm(c.alloc)
        sid = c.session()
        echo = pb.EchoRequest(payload=b"")
        only = request_to_proto(req, sid)
        only.translate_only = True
        full = request_to_proto(req, sid)
        # a batch like a model's layers: same shapes (cache hits), distinct outputs
        ys = [c.alloc(req.outputs[0].byte_size) for _ in range(batch - 1)]
        reqs = [req] + [
            OpRequest(req.op, req.inputs, (replace(req.outputs[0], addr=y),), req.attrs) for y in ys
        ]
        stub = c.stub
        transport = {
            "grpc_echo_us_p50": lambda: stub.Echo(echo, timeout=5),
            "grpc_translate_us_p50": lambda: stub.TranslateOp(only, timeout=5),
        }
        interleaved(transport, min(200, n))  # warm up channel, server threads and caches
        out = interleaved(transport, n)
        m = max(20, n // 5)
        rtt = interleaved(
            {
                "single_op_rtt_us": lambda: c.translate(req, submit=False),
                "batch": lambda: c.translate_batch(reqs, submit=False),
            },
            m,
        )
        out["single_op_rtt_us"] = rtt["single_op_rtt_us"]
        out["batch64_per_op_us"] = rtt["batch"] / batch
        # the same with submission: the NumPy "device" then runs in the server's process
        out["grpc_translate_submit_us_p50"] = p50(lambda: stub.TranslateOp(full, timeout=5), n)
        c.wait_fence(c.translate(req, submit=True).fence_value, 60)
        out["single_op_submit_rtt_us"] = p50(lambda: c.translate(req), n)
        c.wait_fence(c.translate(req, submit=True).fence_value, 60)
        per = p50(lambda: c.translate_batch(reqs), max(10, n // 20)) / batch
        out["batch64_submit_per_op_us"] = per
        c.wait_fence(c.translate(req, submit=True).fence_value, 60)
    return out


def run(n: int = 1000) -> dict[str, Any]:
    """All figures, the seed's beside them, and the goal ratios computed from this run."""
    out: dict[str, Any] = {}
    out.update(in_process(2 * n))
    out.update(over_grpc(n))
    out.update(SEED)
    out["grpc_translate_over_echo"] = out["grpc_translate_us_p50"] / out["grpc_echo_us_p50"]
    out["grpc_translate_submit_over_echo"] = (
        out["grpc_translate_submit_us_p50"] / out["grpc_echo_us_p50"]
    )
    out["batch64_submit_per_op_over_single"] = (
        out["batch64_submit_per_op_us"] / out["single_op_submit_rtt_us"]
    )
    out["batch64_per_op_over_single"] = out["batch64_per_op_us"] / out["single_op_rtt_us"]
    out["seed_batch_per_op_over_single"] = (
        SEED["seed_batch_per_op_us"] / SEED["seed_single_op_rtt_us"]
    )
    out["goals"] = dict(GOALS)
    out["goals_met"] = {
        "translate_hit": out["translate_hit_us_p50"] <= GOALS["translate_hit_us_p50_max"],
        "translate_miss": out["translate_miss_us_p50"] <= GOALS["translate_miss_us_p50_max"],
        "grpc_translate_vs_echo": out["grpc_translate_over_echo"]
        <= GOALS["grpc_translate_over_echo_max"],
        "batch64_vs_single": out["batch64_per_op_over_single"]
        <= GOALS["batch64_per_op_over_single_max"],
    }
    out["numpy"] = np.__version__
    return {k: (round(v, 3) if isinstance(v, float) else v) for k, v in out.items()}
