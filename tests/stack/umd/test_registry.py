from __future__ import annotations

import pytest

from stack.kmd.blob import decode
from stack.kmd.kernels.ids import KernelId
from stack.umd import DType, OpKind, OpRequest, TensorDesc
from stack.umd.errors import UnknownOpError
from stack.umd.pipeline import Pipeline
from stack.umd.plan import KernelCall, Semantic
from stack.umd.registry import OpTranslator, TranslatorRegistry
from stack.umd.templates import TemplateRegistry
from stack.umd.translators import ElementwiseTranslator, default_translators
from stack.umd.translators._common import Builder


def test_every_op_kind_is_routed() -> None:
    reg = default_translators()
    for op in OpKind:
        assert op in reg
    fam = reg.families()
    assert set(fam) == {
        "linear",
        "det",
        "einsum",
        "conv_pool",
        "conv_transpose",
        "col2im",
        "deform_conv",
        "causal_conv_with_state",
        "rnn",
        "gru",
        "lstm",
        "conv_integer",
        "qlinear_conv",
        "unpool",
        "grid_sample",
        "affine_grid",
        "norm",
        "elementwise",
        "swiglu",
        "quant",
        "data",
        "pointwise",
        "bitcast",
        "reduce",
        "dft",
        "negative_log_likelihood_loss",
        "softmax_cross_entropy_loss",
        "rotary_embedding",
        "attention",
        "linear_attention",
        "index",
    }


def test_unknown_op_lists_registered_ones() -> None:
    reg = TranslatorRegistry()
    reg.register(ElementwiseTranslator())
    with pytest.raises(UnknownOpError) as info:
        reg.route(OpKind.GEMM)
    assert "ADD" in str(info.value) and "RELU" in str(info.value)


def test_a_second_translator_for_an_op_is_refused() -> None:
    reg = default_translators()
    with pytest.raises(ValueError, match="already routed"):
        reg.register(ElementwiseTranslator())


class _NegateViaSub(OpTranslator):
    """A new op family registered from outside: SUB only, with operands swapped."""

    family = "custom"
    ops = frozenset({OpKind.SUB})

    def parse(self, req: OpRequest, templates: TemplateRegistry) -> Semantic:
        b = Builder(req)
        a, c = b.input(1), b.input(0)
        return b.build(KernelCall(KernelId.SUB, (a, c, b.output(0)), 2, {}))

    def infer(self, call: KernelCall) -> tuple[tuple[int, ...], ...]:
        return (call.ins[0].shape,)


def test_adding_an_op_family_means_registering_one_translator() -> None:
    reg = TranslatorRegistry()
    reg.register(_NegateViaSub())
    p = Pipeline(translators=reg)
    t = TensorDesc(0, (3,), DType.F32)
    prog = p.compile(OpRequest.make(OpKind.SUB, [t, t], [t]))
    blob = decode(prog.patch((100, 200, 300))[0])
    assert blob.kernel_id is KernelId.SUB
    assert [q.addr for q in blob.params] == [200, 100, 300]
