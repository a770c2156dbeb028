"""The IR verifier, run after import and between passes.

Rules (each failure is a :class:`VerifyError` whose ``check`` names the rule):

* ``defined-before-use`` — every node input is a graph input, a constant or the output of an
  earlier node (the pipeline-schema rule "inputs must be produced upstream");
* ``single-producer`` — no value is written twice, nor both fed in and written;
* ``outputs-produced`` — every graph output exists;
* ``arity`` — input/output counts fit the op's schema;
* ``typed`` (when ``typed=True``) — every value has a static type and re-running the op's
  shape rule reproduces it; a disagreement is a :class:`ShapeMismatchError` with a per-dimension
  report (the linker's refusal of mismatched shapes).
"""

from __future__ import annotations

from dataclasses import dataclass

from stack.compiler.errors import ShapeMismatchError, VerifyError
from stack.compiler.ir import Graph, Node, OpType, TensorType
from stack.compiler.layouts import infer_node


@dataclass(frozen=True, slots=True)
class Arity:
    """Allowed input and output counts of an op (``max_in=-1``: unbounded)."""

    min_in: int
    max_in: int
    min_out: int = 1
    max_out: int = 1


ARITY: dict[OpType, Arity] = {
    OpType.CONV: Arity(2, 4),  # X, W, bias, residual (fused Add)
    OpType.CONV_TRANSPOSE: Arity(2, 3),  # X, W, bias
    OpType.COL2IM: Arity(1, 1),  # input (image_shape and block_shape are attributes)
    OpType.DEFORM_CONV: Arity(3, 5),  # X, W, offset, bias, mask (a mask needs the bias)
    # input, weight, bias, past_state (a past_state needs the bias) -> output, present_state
    OpType.CAUSAL_CONV_WITH_STATE: Arity(2, 4, 2, 2),
    # X, W, R, B, sequence_lens, initial_h (a trailing run: the importer fills) -> Y, Y_h
    OpType.RNN: Arity(3, 6, 2, 2),
    OpType.GRU: Arity(3, 6, 2, 2),  # RNN's operands
    OpType.LSTM: Arity(3, 8, 3, 3),  # GRU's operands, initial_c and P
    OpType.CONV_INTEGER: Arity(2, 4),  # x, w, x_zero_point, w_zero_point (w's needs x's)
    OpType.QLINEARCONV: Arity(8, 9),  # x, its scale and zero point, w's, y's, then B
    OpType.GEMM: Arity(2, 3),
    OpType.MATMUL: Arity(2, 2),
    OpType.DET: Arity(1, 1),
    OpType.ADD: Arity(2, 2),
    OpType.SUB: Arity(2, 2),
    OpType.MUL: Arity(2, 2),
    OpType.SWIGLU: Arity(2, 2),  # A (the gate), B (the linear value)
    OpType.DIV: Arity(2, 2),
    OpType.RELU: Arity(1, 1),
    OpType.BATCHNORM: Arity(5, 5),
    OpType.DROPOUT: Arity(1, 3, 1, 2),
    OpType.IDENTITY: Arity(1, 1),
    OpType.COPY: Arity(1, 1),
    OpType.MAXPOOL: Arity(1, 1),
    OpType.AVGPOOL: Arity(1, 1),
    OpType.GLOBALAVGPOOL: Arity(1, 1),
    OpType.GLOBALLPPOOL: Arity(1, 1),
    OpType.MAXROIPOOL: Arity(2, 2),  # X, rois
    OpType.ROIALIGN: Arity(3, 3),  # X, rois, batch_indices
    OpType.GRID_SAMPLE: Arity(2, 2),  # X, grid
    OpType.AFFINE_GRID: Arity(1, 1),  # theta (size is an attribute)
    OpType.MAXUNPOOL: Arity(2, 2),  # X, I (the output shape is an attribute)
    OpType.FLATTEN: Arity(1, 1),
    OpType.RESHAPE: Arity(1, 2),
    OpType.CONCAT: Arity(1, -1),
    OpType.SOFTMAX: Arity(1, 1),
    OpType.LAYERNORM: Arity(2, 3, 1, 3),
    OpType.QUANTIZE: Arity(2, 3),
    OpType.DEQUANTIZE: Arity(2, 3),
    OpType.DYNAMIC_QUANTIZE_LINEAR: Arity(1, 1, 3, 3),  # x -> y, y_scale, y_zero_point
    OpType.QLINEARMATMUL: Arity(8, 8),
    OpType.MATMUL_INTEGER: Arity(2, 4),
    OpType.CONSTANT_OF_SHAPE: Arity(1, 1),
    OpType.SUM: Arity(1, -1),
    OpType.TRANSPOSE: Arity(1, 1),
    OpType.UNARY: Arity(1, 1),
    OpType.BINARY: Arity(2, 2),
    OpType.WHERE: Arity(3, 3),
    OpType.CAST: Arity(1, 1),
    OpType.BITCAST: Arity(1, 1),
    OpType.REDUCE: Arity(1, 1),
    OpType.ARG_REDUCE: Arity(1, 1),
    OpType.NEGATIVE_LOG_LIKELIHOOD_LOSS: Arity(2, 3),  # input, target, weight
    OpType.SOFTMAX_CROSS_ENTROPY_LOSS: Arity(2, 3, 2, 2),  # scores, labels, weights
    OpType.ROTARY_EMBEDDING: Arity(3, 4),  # X, cos_cache, sin_cache, position_ids
    OpType.EINSUM: Arity(1, -1),  # Inputs, one term of the equation each
    OpType.CUMSUM: Arity(1, 1),
    OpType.DFT: Arity(1, 1),  # input (dft_length and axis are attributes)
    OpType.STFT: Arity(1, 2),  # signal, window (frame_step and frame_length are attributes)
    # Q, K, V, attn_mask, past_key, past_value, nonpad_kv_seqlen (a trailing run) -> Y,
    # present_key, present_value, qk_matmul_output
    OpType.ATTENTION: Arity(3, 7, 4, 4),
    # query, key, value, past_state, decay, beta (a trailing run) -> output, present_state
    OpType.LINEAR_ATTENTION: Arity(3, 6, 2, 2),
    OpType.TOPK: Arity(1, 1, 2, 2),
    OpType.GATHER: Arity(2, 2),
    OpType.GATHER_ELEMENTS: Arity(2, 2),
    OpType.GATHER_ND: Arity(2, 2),
    OpType.SCATTER_ND: Arity(3, 3),  # data, indices, updates
    OpType.SCATTER_ELEMENTS: Arity(3, 3),  # data, indices, updates
    OpType.REVERSE_SEQUENCE: Arity(2, 2),  # input, sequence_lens
    OpType.TENSOR_SCATTER: Arity(2, 3),  # past_cache, update, write_indices
    OpType.SLICE: Arity(1, 1),
    OpType.PAD: Arity(1, 1),
    OpType.CENTER_CROP_PAD: Arity(1, 1),  # input_data (the target shape is an attribute)
    OpType.EXPAND: Arity(1, 1),
    OpType.TILE: Arity(1, 1),
    OpType.RANGE: Arity(3, 3),
    OpType.NONZERO: Arity(1, 1),
}


def _fail(check: str, message: str, node: Node | None = None) -> VerifyError:
    return VerifyError(
        message,
        check=check,
        op=node.op.value if node else None,
        node=node.name if node else None,
    )


def mismatch_report(value: str, expected: TensorType, got: TensorType) -> str:
    """A precise description of how two tensor types differ."""
    parts = [f"value {value!r}: recorded {expected}, producer yields {got}"]
    if expected.dtype != got.dtype:
        parts.append(f"dtype {expected.dtype.value} != {got.dtype.value}")
    if len(expected.shape) != len(got.shape):
        parts.append(f"rank {len(expected.shape)} != {len(got.shape)}")
    else:
        for i, (a, b) in enumerate(zip(expected.shape, got.shape, strict=True)):
            if a != b:
                parts.append(f"dim {i}: {a} != {b}")
    return "; ".join(parts)


def _check_arity(node: Node) -> None:
    spec = ARITY.get(node.op)
    if spec is None:
        raise _fail("arity", f"op {node.op.value} has no schema", node)
    n_in, n_out = len(node.inputs), len(node.outputs)
    if n_in < spec.min_in or (spec.max_in >= 0 and n_in > spec.max_in):
        raise _fail("arity", f"{n_in} inputs, expected {spec.min_in}..{spec.max_in}", node)
    if not spec.min_out <= n_out <= spec.max_out:
        raise _fail("arity", f"{n_out} outputs, expected {spec.min_out}..{spec.max_out}", node)


def verify(graph: Graph, *, typed: bool = False) -> None:
    """Check ``graph``; raise VerifyError (or ShapeMismatchError) on the first broken rule."""
    defined = set(graph.inputs) | set(graph.constants)
    if len(defined) != len(graph.inputs) + len(graph.constants):
        raise _fail("single-producer", "a graph input is also a constant")
    names: set[str] = set()
    for node in graph.nodes:
        if node.name in names:
            raise _fail("unique-names", f"node name {node.name!r} used twice", node)
        names.add(node.name)
        _check_arity(node)
        for value in node.inputs:
            if value and value not in defined:
                raise _fail("defined-before-use", f"input {value!r} is not produced upstream", node)
        for value in node.outputs:
            if value in defined:
                raise _fail("single-producer", f"value {value!r} is written twice", node)
            if value:
                defined.add(value)
        if typed:
            _check_types(graph, node)
    for value in graph.outputs:
        if value not in defined:
            raise _fail("outputs-produced", f"graph output {value!r} is never produced")


def _check_types(graph: Graph, node: Node) -> None:
    in_types = [graph.type_of(v) if v else None for v in node.inputs]
    for value, t in zip(node.inputs, in_types, strict=True):
        if value and t is None:
            raise _fail("typed", f"input {value!r} has no static type", node)
    got = infer_node(node, in_types, graph.constants)
    for value, actual in zip(node.outputs, got, strict=False):
        recorded = graph.types.get(value)
        if recorded is None:
            raise _fail("typed", f"output {value!r} has no static type", node)
        if recorded != actual:
            raise ShapeMismatchError(
                mismatch_report(value, recorded, actual),
                check="typed",
                op=node.op.value,
                node=node.name,
                value=value,
                expected=str(recorded),
                got=str(actual),
            )
