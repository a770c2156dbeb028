"""Whole models through adapter -> compiler -> runtime -> UMD -> KMD, against onnxruntime.

Models are built in code (``stack.adapter.zoo``: random weights, fixed seeds). Float models
must match onnxruntime within rtol 1e-3 / atol 1e-4. The int8-quantised CNN (post-training
quantization, calibrated on 4 random samples) is held to a documented tolerance: its largest
absolute error is at most 3 % of the largest reference magnitude, and its top-1 class agrees.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnxruntime as ort
import pytest

from stack.adapter import import_model
from stack.adapter.zoo import BUILTIN, cnn, random_inputs
from stack.compiler import CompiledModel, CompileOptions, QuantizeOptions, compile_graph
from stack.kmd.kernels import blas
from stack.runtime import Executable, Runtime

INT8_REL_TOLERANCE = 0.03
BIN = Path(sys.executable).parent


def _reference(model, feeds):
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [o.name for o in session.get_outputs()]
    return dict(zip(names, session.run(None, feeds), strict=True))


@pytest.mark.parametrize("streams", [1, 2])
@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_model_matches_onnxruntime(name: str, streams: int) -> None:
    model = BUILTIN[name]()
    with CompiledModel(import_model(model), CompileOptions(streams=streams)) as compiled:
        for seed in (0, 1):
            feeds = random_inputs(model, seed)
            ours = compiled.run(feeds)
            for key, ref in _reference(model, feeds).items():
                np.testing.assert_allclose(ours[key], ref, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_model_outputs_agree_with_one_and_two_threads(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """$REFSTACK_THREADS=2 splits launches over two threads; the outputs stay the same."""
    model = BUILTIN[name]()
    feeds = random_inputs(model, 3)
    outputs = {}
    for threads in (1, 2):
        monkeypatch.setenv("REFSTACK_THREADS", str(threads))
        with CompiledModel(import_model(model)) as compiled:
            assert compiled.runtime.umd.device.threads == threads
            outputs[threads] = compiled.run(feeds)
    for key, ref in _reference(model, feeds).items():
        np.testing.assert_allclose(outputs[1][key], ref, rtol=1e-3, atol=1e-4)
        np.testing.assert_allclose(outputs[2][key], outputs[1][key], rtol=1e-5, atol=1e-5)


def test_cnn_memory_plan_reuses_memory() -> None:
    """The plan stays within 10 % of the lower bound; fusion (which removes the residual Adds'
    intermediates, so the naive total shrinks, and pools the first Conv inside its kernel) never
    makes the arena larger; with and without fusion the arena is at most 0.3 x the naive
    total."""
    fused = compile_graph(import_model(cnn()))
    unfused_passes = tuple(p for p in CompileOptions().passes if p != "fuse")
    unfused = compile_graph(import_model(cnn()), CompileOptions(passes=unfused_passes))
    fig, base = fused.memory_figures(), unfused.memory_figures()
    assert fig["arena_bytes"] <= 1.10 * fig["lower_bound_bytes"], fig
    assert fig["lower_bound_bytes"] <= fig["arena_bytes"], fig
    assert fig["arena_bytes"] <= base["arena_bytes"], (fig, base)
    assert base["arena_bytes"] <= 0.3 * base["naive_bytes"], base
    assert fig["arena_bytes"] <= 0.3 * fig["naive_bytes"], fig
    assert unfused.graph.op_counts()["Add"] == 9 and "Add" not in fused.graph.op_counts()
    assert unfused.graph.op_counts()["MaxPool"] == 1 and "MaxPool" not in fused.graph.op_counts()


def test_int8_quantized_cnn_stays_within_the_documented_tolerance() -> None:
    model = cnn()
    calibration = tuple(random_inputs(model, seed) for seed in range(1, 5))
    options = CompileOptions(quantize=QuantizeOptions(calibration=calibration))
    with CompiledModel(import_model(model), options) as compiled:
        counts = compiled.result.graph.op_counts()
        assert counts["MatMulInteger"] >= 1 and counts["QuantizeLinear"] >= 1
        float_consts = CompiledModel(import_model(model))
        try:
            assert (
                compiled.result.memory_figures()["const_bytes"]
                < 0.5 * (float_consts.result.memory_figures()["const_bytes"])
            )
        finally:
            float_consts.close()
        for seed in (10, 11):
            feeds = random_inputs(model, seed)
            ref = _reference(model, feeds)
            out = compiled.run(feeds)
            for key, want in ref.items():
                err = float(np.max(np.abs(out[key] - want)))
                assert err <= INT8_REL_TOLERANCE * float(np.max(np.abs(want))), err
                assert (out[key].argmax(-1) == want.argmax(-1)).all()


def test_compile_cli_writes_an_executable_the_runtime_runs(tmp_path: Path) -> None:
    model = BUILTIN["mlp"]()
    src, dst = tmp_path / "mlp.onnx", tmp_path / "mlp.sx"
    src.write_bytes(model.SerializeToString())
    result = subprocess.run(
        [str(BIN / "refstack"), "compile", str(src), "-o", str(dst), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["ops"] >= 4 and summary["arena_bytes"] <= summary["naive_bytes"]
    exe = Executable.from_bytes(dst.read_bytes())
    feeds = random_inputs(model, 3)
    with Runtime(streams=1) as runtime:
        out = runtime.load(exe).run(feeds)
    for key, ref in _reference(model, feeds).items():
        np.testing.assert_allclose(out[key], ref, rtol=1e-3, atol=1e-4)


def test_compile_cli_reports_an_unsupported_op(tmp_path: Path) -> None:
    from onnx import TensorProto, helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 2])
    graph = helper.make_graph(
        [helper.make_node("Unique", ["x"], ["y"], name="e")],
        "g",
        [x],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [])],
    )
    src = tmp_path / "erf.onnx"
    src.write_bytes(helper.make_model(graph).SerializeToString())
    result = subprocess.run(
        [str(BIN / "refstack"), "compile", str(src), "-o", str(tmp_path / "e.sx"), "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 2
    err = json.loads(result.stdout)
    assert err["error"] == "UnsupportedOpError"
    assert err["op_type"] == "Unique" and err["node"] == "e"
    assert err["layers"] == ["adapter", "compiler", "umd", "kmd"]


def test_bench_model_prints_the_figures() -> None:
    result = subprocess.run(
        [str(BIN / "refstack"), "bench", "model", "mlp", "--json", "--runs", "3", "--threads", "2"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    fig = json.loads(result.stdout)
    for key in (
        "stack_ms_p50",
        "onnxruntime_ms_p50",
        "max_abs_err",
        "naive_bytes",
        "arena_bytes",
        "lower_bound_bytes",
        "fixed_run_us",
        "onnxruntime_fixed_run_us",
    ):
        assert key in fig
    assert fig["threads"] == 2
    ratio = fig["fixed_run_us"] / fig["onnxruntime_fixed_run_us"]
    assert fig["fixed_run_over_onnxruntime"] == pytest.approx(ratio, abs=0.01)
    assert fig["stack_ms_p90"] >= fig["stack_ms_p50"]
    assert fig["onnxruntime_ms_p90"] >= fig["onnxruntime_ms_p50"]
    assert fig["handoff_us"] > 0
    assert fig["blas_core"] == blas.core()
    assert fig["max_abs_err"] < 1e-4
    assert fig["lower_bound_bytes"] <= fig["arena_bytes"] <= fig["naive_bytes"]


@pytest.mark.parametrize("retries", [2, 0])
def test_kmd_fault_during_a_whole_model_run(retries: int) -> None:
    from stack.kmd import FaultKind
    from stack.runtime import ExecutionFaultError, RecoveryPolicy

    model = cnn()
    feeds = random_inputs(model, 5)
    ref = _reference(model, feeds)
    runtime = Runtime("numpy", streams=2, recovery=RecoveryPolicy(max_retries=retries))
    compiled = CompiledModel(import_model(model), CompileOptions(streams=2), runtime=runtime)
    try:
        loaded = compiled.model
        session = loaded.session
        queue = session.queue_of(loaded.image.streams[0])
        runtime.umd.device.inject_fault(session.ctx, queue, FaultKind.ECC, after=1)
        if retries:
            out = compiled.run(feeds, timeout_s=30)
            for key, want in ref.items():
                np.testing.assert_allclose(out[key], want, rtol=1e-3, atol=1e-4)
            assert loaded.last_stats is not None and loaded.last_stats.faults == ("ECC",)
        else:
            with pytest.raises(ExecutionFaultError) as err:
                compiled.run(feeds, timeout_s=30)
            assert err.value.details["fault_kind"] == "ECC"
    finally:
        compiled.close()
        runtime.close()


def test_fused_epilogues_match_onnxruntime() -> None:
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(7)
    consts = {
        "w": rng.standard_normal((6, 5)).astype(np.float32),
        "gb": rng.standard_normal((1, 6)).astype(np.float32),
        "s": rng.uniform(0.5, 1.5, 3).astype(np.float32),
        "b": rng.standard_normal(3).astype(np.float32),
        "m": rng.standard_normal(3).astype(np.float32),
        "v": rng.uniform(0.5, 1.5, 3).astype(np.float32),
    }
    nodes = [
        helper.make_node("Gemm", ["x", "w"], ["g"], transB=1, alpha=0.5, beta=0.25),
        helper.make_node("Add", ["g", "gb"], ["h"]),
        helper.make_node("Relu", ["h"], ["y"]),
        helper.make_node("BatchNormalization", ["z", "s", "b", "m", "v"], ["bn"]),
        helper.make_node("Relu", ["bn"], ["y2"]),
    ]
    ins = [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 5]),
        helper.make_tensor_value_info("z", TensorProto.FLOAT, [2, 3, 4, 4]),
    ]
    outs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("y", "y2")]
    inits = [numpy_helper.from_array(a, n) for n, a in consts.items()]
    model = helper.make_model(
        helper.make_graph(nodes, "epilogues", ins, outs, inits),
        opset_imports=[helper.make_opsetid("", 17)],
    )
    feeds = {
        "x": rng.standard_normal((4, 5)).astype(np.float32),
        "z": rng.standard_normal((2, 3, 4, 4)).astype(np.float32),
    }
    with CompiledModel(import_model(model)) as compiled:
        assert compiled.result.graph.op_counts() == {"Gemm": 1, "BatchNormalization": 1}
        out = compiled.run(feeds)
    for key, want in _reference(model, feeds).items():
        np.testing.assert_allclose(out[key], want, rtol=1e-3, atol=1e-4)


def test_compile_cli_int8(tmp_path: Path) -> None:
    src, dst = tmp_path / "mlp.onnx", tmp_path / "mlp8.sx"
    src.write_bytes(BUILTIN["mlp"]().SerializeToString())
    result = subprocess.run(
        [str(BIN / "refstack"), "compile", str(src), "-o", str(dst), "--int8", "2", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    summary = json.loads(result.stdout)
    assert summary["int8"] and summary["op_counts"]["MatMulInteger"] == 3
    ops = {op.op.name for op in Executable.from_bytes(dst.read_bytes()).ops}
    assert {"QUANTIZE", "MATMUL_INTEGER", "DEQUANTIZE"} <= ops


def test_the_90th_percentile_is_the_nearest_rank() -> None:
    from stack.cli.bench_model import _p90

    assert _p90([float(v) for v in range(1, 11)]) == 9.0  # rank ceil(0.9 * 10) = 9
    assert _p90([float(v) for v in range(1, 12)]) == 10.0  # rank ceil(9.9) = 10
    assert _p90([5.0]) == 5.0


def test_the_handoff_is_measured_only_with_more_than_one_thread() -> None:
    from stack.cli.bench_model import handoff_us

    assert handoff_us(1) is None
    cost = handoff_us(2, runs=50)
    assert cost is not None and cost > 0


def test_the_engines_take_turns_in_blocks_and_each_runs_its_count() -> None:
    from stack.cli.bench_model import _medians_ms

    calls: list[str] = []
    figures = _medians_ms([lambda: calls.append("a"), lambda: calls.append("b")], 12)
    assert calls == list("aaabbbaaabbbaaabbbaaabbb")  # blocks of 12 // 4 runs
    assert len(figures) == 2 and all(f.wall_p90 >= f.wall for f in figures)
    calls.clear()
    _medians_ms([lambda: calls.append("a"), lambda: calls.append("b")], 1)
    assert calls == ["a", "b"]
