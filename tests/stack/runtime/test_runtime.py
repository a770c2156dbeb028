from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from stack.runtime import (
    ExecOp,
    ExecutableFormatError,
    ModelClosedError,
    ModelInputError,
    ModelLoadError,
    Runtime,
)


@pytest.fixture
def runtime() -> Iterator[Runtime]:
    rt = Runtime("numpy", streams=2)
    yield rt
    rt.close()


def _check(outputs: dict[str, np.ndarray], expected: dict[str, np.ndarray]) -> None:
    assert set(outputs) == set(expected)
    for name, want in expected.items():
        assert outputs[name].shape == want.shape and outputs[name].dtype == want.dtype
        np.testing.assert_allclose(outputs[name], want, rtol=1e-4, atol=1e-4)


def test_conv_relu_residual_matches_numpy(runtime: Runtime, conv_model: Any) -> None:
    exe, inputs, expected = conv_model
    model = runtime.load(exe.to_bytes())
    _check(model.run(inputs), expected)
    assert model.last_stats is not None and model.last_stats.attempts == 1
    assert model.last_stats.submits == 1  # one stream, one command buffer


def test_two_streams_join(runtime: Runtime, branch_model: Any) -> None:
    exe, inputs, expected = branch_model
    model = runtime.load(exe)
    groups = model.image.schedule.groups
    assert {g.stream for g in groups} == {0, 1}
    assert any(g.waits for g in groups)  # the join waits on the other stream
    _check(model.run(inputs), expected)
    assert model.last_stats is not None and model.last_stats.submits == len(groups)


def test_runs_repeat_with_new_inputs(runtime: Runtime, branch_model: Any, rng: Any) -> None:
    exe = branch_model[0]
    model = runtime.load(exe)
    w = [
        np.frombuffer(exe.consts, np.float32, 64, exe.tensor(f"w{i}").offset).reshape(8, 8)
        for i in range(4)
    ]
    for _ in range(3):
        a = rng.standard_normal((4, 8)).astype(np.float32)
        want = np.maximum(a @ w[0] @ w[1], 0) + np.maximum(a @ w[2] @ w[3], 0)
        _check(model.run({"a": a}), {"out/sum:0": want})


def test_one_stream_runtime_folds_lanes(branch_model: Any) -> None:
    exe, inputs, expected = branch_model
    with Runtime("numpy", streams=1) as rt:
        model = rt.load(exe)
        assert len(model.image.schedule.groups) == 1
        _check(model.run(inputs), expected)


def test_load_from_file(runtime: Runtime, conv_model: Any, tmp_path: Path) -> None:
    exe, inputs, expected = conv_model
    path = tmp_path / "m.sx"
    path.write_bytes(exe.to_bytes())
    _check(runtime.load(path).run(inputs), expected)
    with pytest.raises(ModelLoadError):
        runtime.load(tmp_path / "missing.sx")
    path.write_bytes(b"RSX\0" + b"\0" * 10)
    with pytest.raises(ExecutableFormatError):
        runtime.load(path)


@pytest.mark.parametrize(
    ("inputs", "field"),
    [
        ({"x": np.zeros((1, 2, 5, 5), np.float32), "z": np.zeros(1, np.float32)}, "z"),
        ({}, "x"),
        ({"x": np.zeros((1, 2, 5, 4), np.float32)}, "x"),
        ({"x": np.zeros((1, 2, 5, 5), np.float64)}, "x"),
    ],
)
def test_bad_inputs_are_typed(runtime: Runtime, conv_model: Any, inputs: Any, field: str) -> None:
    model = runtime.load(conv_model[0])
    with pytest.raises(ModelInputError) as info:
        model.run(inputs)
    assert info.value.input == field


def test_op_refused_by_the_umd_is_a_load_error(runtime: Runtime, builder: Any) -> None:
    b = builder()
    x = b.input("x", (2, 3))
    y = b.output("y", (2, 3))
    b.op(ExecOp.GEMM, [x, x], [y])  # (2,3) x (2,3): inner dimensions disagree
    with pytest.raises(ModelLoadError) as info:
        runtime.load(b.build())
    assert info.value.details.get("cause")
    assert runtime.umd.device.stats().allocations == 0  # nothing left behind


def test_close_frees_everything(conv_model: Any, branch_model: Any) -> None:
    rt = Runtime("numpy")
    first = rt.load(conv_model[0])
    second = rt.load(branch_model[0])
    second.run(branch_model[1])
    assert rt.umd.device.stats().allocations > 0
    first.close()
    first.close()  # idempotent
    with pytest.raises(ModelClosedError):
        first.run(conv_model[1])
    assert rt.umd.device.stats().allocations > 0  # the second model still holds its memory
    second.close()
    stats = rt.umd.device.stats()
    assert stats.allocations == 0 and stats.contexts == 0
    third = rt.load(conv_model[0])
    rt.close()  # closes the models still open
    with pytest.raises(ModelClosedError):
        third.run(conv_model[1])
    with pytest.raises(ModelClosedError):
        rt.load(conv_model[0])


def test_models_run_concurrently_from_threads(conv_model: Any, branch_model: Any) -> None:
    import threading

    errors: list[BaseException] = []
    with Runtime("numpy") as rt:
        pairs = [
            (rt.load(exe), inputs, expected)
            for exe, inputs, expected in (conv_model, branch_model, branch_model)
        ]

        def work(model: Any, inputs: Any, expected: Any) -> None:
            try:
                for _ in range(5):
                    _check(model.run(inputs), expected)
            except BaseException as exc:  # noqa: BLE001 - re-raised in the main thread
                errors.append(exc)

        threads = [threading.Thread(target=work, args=p) for p in pairs]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
    assert not errors, errors[0]
