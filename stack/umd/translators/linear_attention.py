"""Linear attention with its recurrent state: LINEAR_ATTENTION (ONNX LinearAttention, opset 27;
``update_rule`` by name — linear, gated, delta or gated_delta, default gated_delta —,
``q_num_heads`` and ``kv_num_heads`` at least 1, ``kv_num_heads`` dividing ``q_num_heads``, and
``scale`` a number, 0 meaning 1 / sqrt(Dk); another value an InvalidRequestError on that
attribute).

Inputs in ONNX's order: query [B, T, Hq * Dk] F32 or F16 (else an UnsupportedDtypeError on
inputs[0].dtype), key [B, T, Hkv * Dk] and value [B, T, Hkv * Dv], then the optional past_state
[B, Hkv, Dk, Dv] (F32 or F16, its own dtype), decay [B, T, Hkv or Hkv * Dk] and beta
[B, T, Hkv or 1] as a trailing run, all but past_state of query's dtype (else an
UnsupportedDtypeError on inputs[j].dtype); a gated rule needs decay and a delta one beta (else
an InvalidRequestError on inputs); shapes as the kernel's
(:func:`stack.kmd.kernels.linear_attention.shapes`), else a ShapeError on inputs[j].shape. Two
outputs, both always written: output [B, T, Hq * Dv] of query's dtype and present_state
[B, Hkv, Dk, Dv] of past_state's (query's without one), else an UnsupportedDtypeError on
outputs[j].dtype. The kernel reads the 4-D past_state and writes present_state in their logical
order, so one stored NHWC is transposed first and one asked NHWC transposed back; the 3-D
operands are taken as stored.
"""

from __future__ import annotations

from stack.kmd.dtypes import DType
from stack.kmd.kernels.ids import KernelId
from stack.kmd.kernels.linear_attention import LinearUpdateRule, OperandError, shapes
from stack.umd.errors import InvalidRequestError, ShapeError, UnsupportedDtypeError
from stack.umd.ops import Layout, OpKind, OpRequest
from stack.umd.plan import KernelCall, Semantic
from stack.umd.registry import OpTranslator
from stack.umd.templates import TemplateRegistry
from stack.umd.translators._common import Builder, attr_float, attr_int, check_dtype, need_counts

_KERNEL = KernelId.LINEAR_ATTENTION

#: LINEAR_ATTENTION's update_rule names (ONNX's) -> the kernel's immediate.
UPDATE_RULES = {rule.name.lower(): rule for rule in LinearUpdateRule}


def _invalid(name: str, why: str) -> InvalidRequestError:
    return InvalidRequestError(f"LINEAR_ATTENTION {name} {why}", field=f"attrs.{name}")


def _dtype_error(group: str, j: int, want: DType, got: DType) -> UnsupportedDtypeError:
    return UnsupportedDtypeError(f"LINEAR_ATTENTION {group}[{j}] must be {want.name}, got "
                                 f"{got.name}", field=f"{group}[{j}].dtype")  # fmt: skip


class LinearAttentionTranslator(OpTranslator):
    """LINEAR_ATTENTION → the linear attention kernel on query, key, value and the optional
    past_state, decay and beta, output and present_state, with update_rule's code, the head
    counts and scale as its immediates."""

    family = "linear_attention"
    ops = frozenset({OpKind.LINEAR_ATTENTION})

    def parse(self, req: OpRequest, templates: TemplateRegistry) -> Semantic:
        need_counts(req, (3, 6), 2)
        q = req.inputs[0].dtype
        check_dtype(templates, _KERNEL, q, "inputs[0].dtype")
        if len(req.inputs) > 3:
            check_dtype(templates, _KERNEL, req.inputs[3].dtype, "inputs[3].dtype")
        state = req.inputs[3].dtype if len(req.inputs) > 3 else q
        for j, d in enumerate(req.inputs):
            if d.dtype != (state if j == 3 else q):
                raise _dtype_error("inputs", j, state if j == 3 else q, d.dtype)
        for j, want in ((0, q), (1, state)):
            if req.outputs[j].dtype != want:
                raise _dtype_error("outputs", j, want, req.outputs[j].dtype)
        attrs = req.attr_map()
        name = attrs.get("update_rule", "gated_delta")
        if not isinstance(name, str) or name not in UPDATE_RULES:
            raise _invalid("update_rule", f"{name!r} is unknown; known: {', '.join(UPDATE_RULES)}")
        rule = UPDATE_RULES[name]
        need = 6 if rule >= LinearUpdateRule.DELTA else 5 if rule else 3
        if len(req.inputs) < need:
            raise InvalidRequestError(f"LINEAR_ATTENTION {name} takes {need}..6 inputs, got "
                                      f"{len(req.inputs)}", field="inputs")  # fmt: skip
        hq, hkv = attr_int(attrs, "q_num_heads", 0), attr_int(attrs, "kv_num_heads", 0)
        if hq < 1 or hkv < 1 or hq % hkv:
            raise _invalid("q_num_heads", f"{hq} is not a positive multiple of kv_num_heads {hkv}")
        imm = {"update_rule": int(rule), "q_num_heads": hq, "kv_num_heads": hkv,
               "scale": attr_float(attrs, "scale", 0.0)}  # fmt: skip
        b = Builder(req)
        ins = tuple(
            b.input(j, Layout.NCHW if j == 3 else Layout.ANY) for j in range(len(req.inputs))
        )
        outs = (b.output(0), b.output(1, Layout.NCHW))
        return b.build(KernelCall(_KERNEL, (*ins, *outs), len(ins), imm))

    def infer(self, call: KernelCall) -> tuple[tuple[int, ...], ...]:
        try:
            return shapes([p.shape for p in call.ins], call.i("q_num_heads"),
                          call.i("kv_num_heads"))  # fmt: skip
        except OperandError as e:
            raise ShapeError(f"LINEAR_ATTENTION {e}", field=f"inputs[{e.index}].shape") from None
