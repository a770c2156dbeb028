from __future__ import annotations

import pytest

from stack.kmd.kernels.ids import KernelId
from stack.umd import DType
from stack.umd.errors import InvalidRequestError, UnknownOpError
from stack.umd.plan import KernelCall, Operand
from stack.umd.templates import (
    KernelTemplate,
    TemplateRegistry,
    default_templates,
    launch_elementwise,
    launch_rows,
    launch_tiled,
)

F = DType.F32


def _call(
    kernel: KernelId, shapes: list[tuple[int, ...]], n_in: int, **attrs: object
) -> KernelCall:
    ops = tuple(Operand(i, s, F) for i, s in enumerate(shapes))
    return KernelCall(kernel, ops, n_in, attrs)  # type: ignore[arg-type]


def test_every_kernel_has_a_template() -> None:
    reg = default_templates()
    for k in KernelId:
        assert k in reg
        assert reg.get(k).dtypes


def test_unknown_kernel_lists_known_templates() -> None:
    reg = TemplateRegistry()
    reg.register(KernelTemplate(KernelId.RELU, frozenset({F})))
    with pytest.raises(UnknownOpError, match="RELU"):
        reg.get(KernelId.GEMM)


def test_body_follows_the_abi_order_and_defaults() -> None:
    t = default_templates().get(KernelId.GEMM)
    ints, floats = t.body(_call(KernelId.GEMM, [(2, 2), (2, 2), (2, 2)], 2, trans_b=1, beta=0.0))
    assert ints == (0, 1, 0) and floats == (1.0, 0.0)


def test_required_immediate_missing_names_the_attribute() -> None:
    t = default_templates().get(KernelId.MAXPOOL)
    with pytest.raises(InvalidRequestError) as info:
        t.body(_call(KernelId.MAXPOOL, [(1, 1, 4, 4), (1, 1, 2, 2)], 1))
    assert info.value.field == "attrs.kernel_h"


def test_shape_constraint_is_enforced_at_instantiation() -> None:
    t = default_templates().get(KernelId.GEMM)
    with pytest.raises(InvalidRequestError, match="2-D"):
        t.instantiate(_call(KernelId.GEMM, [(2, 2, 2), (2, 2), (2, 2)], 2))


def test_launch_configurations() -> None:
    e = launch_elementwise(_call(KernelId.RELU, [(1000,), (1000,)], 1))
    assert e.grid == (4, 1, 1) and e.block == (256, 1, 1)
    t = launch_tiled(_call(KernelId.MATMUL, [(3, 40, 8), (8, 17), (3, 40, 17)], 2))
    assert t.grid == (2, 3, 3) and t.block == (16, 16, 1) and t.shared_mem == 2 * 16 * 16 * 4
    r = launch_rows(_call(KernelId.SOFTMAX, [(6, 100), (6, 100)], 1, axis=1))
    assert r.grid == (6, 1, 1) and r.block == (128, 1, 1)
