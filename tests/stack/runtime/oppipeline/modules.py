"""Two third-party operator modules for the pipeline tests, built from descriptor files in
``fixtures/`` and registered explicitly next to the built-in module: ``strict`` (a ReLU whose
descriptor forbids NaN/Inf) and ``flaky`` (a ReLU whose kernel raises on negative input, as a
crashing native library would), and ``meet`` (a ReLU whose launches wait for each other, to
show that two stages run at once). Each outranks the built-in ReLU, so a device given the
registry runs it."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import numpy as np

from stack.kmd import KmdDevice
from stack.kmd.opmod import ModuleRegistry, OperatorModule, discover, make_module
from stack.runtime.errors import ModuleError
from stack.umd import Umd

FIXTURES = Path(__file__).parent / "fixtures"


def _relu(ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]) -> None:
    np.maximum(ins[0], 0, out=outs[0])


def _relu_flaky(
    ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
) -> None:
    if (ins[0] < 0).any():
        raise RuntimeError("relu_flaky: native library crashed on a negative input")
    np.copyto(outs[0], ins[0])


def meet(barrier: threading.Barrier) -> OperatorModule:
    """A ReLU whose kernel returns only once ``barrier``'s parties all run it at the same time:
    two launches meet only if they overlap; run one after the other, the first one's wait ends
    in BrokenBarrierError after the barrier's timeout (a KERNEL fault)."""

    def relu_meet(
        ins: list[Any], outs: list[Any], ints: tuple[int, ...], fl: tuple[float, ...]
    ) -> None:
        barrier.wait()
        np.maximum(ins[0], 0, out=outs[0])

    return make_module(
        "meet", "1.0.0", "1.0.0", [FIXTURES / "relu_meet.opdesc.json"],
        {("relu_meet", "numpy"): relu_meet},
    )  # fmt: skip


def strict() -> OperatorModule:
    return make_module(
        "strict", "0.3.0", "1.0.0", [FIXTURES / "relu_strict.opdesc.json"],
        {("relu_strict", "numpy"): _relu},
    )  # fmt: skip


def flaky() -> OperatorModule:
    return make_module(
        "flaky", "2.1.4", "1.0.0", [FIXTURES / "relu_flaky.opdesc.json"],
        {("relu_flaky", "numpy"): _relu_flaky},
    )  # fmt: skip


def registry_with(*modules: OperatorModule) -> ModuleRegistry:
    """The installed modules (the built-in one) plus ``modules``."""
    reg = discover()
    for m in modules:
        reg.register(m)
    return reg


def umd_on(reg: ModuleRegistry) -> tuple[Umd, KmdDevice]:
    """A UMD whose NumPy device selects its kernels from ``reg`` (close both)."""
    device = KmdDevice("numpy", modules=reg)
    return Umd(device=device), device


def side_by_side(
    failing_run: Callable[[], Any],
    times: int,
    healthy_run: Callable[[Any], Any],
    inputs: Iterable[Any],
) -> tuple[list[ModuleError], list[np.ndarray]]:
    """Call ``failing_run`` ``times`` times in one thread, collecting its ModuleErrors, while
    another thread runs ``healthy_run`` on every input; both threads must finish. The errors
    and the healthy runs' ``y`` outputs, in order."""
    errors: list[ModuleError] = []
    outputs: list[np.ndarray] = []

    def fail() -> None:
        for _ in range(times):
            try:
                failing_run()
            except ModuleError as exc:
                errors.append(exc)

    def work() -> None:
        outputs.extend(healthy_run(i).outputs["y"] for i in inputs)

    threads = [threading.Thread(target=fail), threading.Thread(target=work)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert [t.is_alive() for t in threads] == [False, False]
    return errors, outputs
