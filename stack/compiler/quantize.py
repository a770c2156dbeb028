"""Post-training int8 quantization (runs after the float pass pipeline).

Calibration (:mod:`stack.compiler.calibrate`) gives each quantised op's input range; then

* ``Gemm`` / 2-D ``MatMul`` with constant weights take the integer path:
  ``QuantizeLinear(x) -> MatMulInteger(x_u8, W_i8) -> DequantizeLinear(int32, s_x * s_w[n])
  -> Add(bias)`` — int8 storage and an int32-accumulating int8 kernel;
* ``Conv`` keeps a float kernel (this pass does not use ConvInteger's int8 kernel) but its
  weights are stored int8 per output channel and dequantised on the device, and its input goes
  through a Quantize/Dequantize pair, so it sees the same int8 rounding an int8 kernel would.

Activations are asymmetric uint8 per tensor; weights symmetric int8 per output channel.
"""

from __future__ import annotations

import numpy as np

from stack.compiler.calibrate import int8_weights, observe_ranges, uint8_params
from stack.compiler.errors import QuantizeError
from stack.compiler.ir import Graph, Node, OpType, freeze_array
from stack.compiler.options import CompileOptions
from stack.compiler.passes import PassRecord, run_passes


def _candidates(graph: Graph, ops: tuple[str, ...]) -> list[Node]:
    out = []
    for node in graph.nodes:
        if node.op.value not in ops or node.inputs[1] not in graph.constants:
            continue
        x = graph.type_of(node.inputs[0])
        if node.op is OpType.GEMM and (
            node.attr("trans_a", 0)
            or node.attr("alpha", 1.0) != 1.0
            or node.attr("beta", 1.0) != 1.0
        ):
            continue
        if node.op is OpType.MATMUL and (
            x is None or len(x.shape) != 2 or graph.constants[node.inputs[1]].ndim != 2
        ):
            continue
        out.append(node)
    return out


def quantize_graph(graph: Graph, options: CompileOptions) -> tuple[Graph, list[PassRecord]]:
    """Return the int8 graph and the records of the passes run after rewriting."""
    q = options.quantize
    if q is None:
        raise QuantizeError("quantize_graph called without QuantizeOptions")
    nodes = _candidates(graph, q.ops)
    ranges = observe_ranges(graph, [n.inputs[0] for n in nodes], q.calibration)
    consts = dict(graph.constants)
    replacement: dict[str, list[Node]] = {}
    for node in nodes:
        scale, zero = uint8_params(*ranges[node.inputs[0]])
        p = node.name
        consts[f"{p}.x_scale"] = freeze_array(np.asarray(scale))
        consts[f"{p}.x_zero"] = freeze_array(np.asarray(zero))
        xq = f"{p}.x_q"
        quant = Node.make(
            f"{p}.quantize",
            OpType.QUANTIZE,
            [node.inputs[0], f"{p}.x_scale", f"{p}.x_zero"],
            [xq],
            axis=0,
        )
        w = graph.constants[node.inputs[1]]
        if node.op is OpType.CONV:
            replacement[node.name] = _conv(node, quant, w, consts)
        else:
            if node.op is OpType.GEMM and node.attr("trans_b", 0):
                w = w.T
            replacement[node.name] = _linear(node, quant, w, float(scale), consts)
    rewritten = []
    for node in graph.nodes:
        rewritten.extend(replacement.get(node.name, [node]))
    out = graph.replace(nodes=tuple(rewritten), constants=consts)
    return run_passes(out, ("infer_shapes", "dce", "infer_shapes"), options)


def _conv(node: Node, quant: Node, w: np.ndarray, consts: dict[str, np.ndarray]) -> list[Node]:
    p = node.name
    wq, ws = int8_weights(w, axis=0)
    consts[f"{p}.w_q"] = freeze_array(wq)
    consts[f"{p}.w_scale"] = freeze_array(ws)
    consts[f"{p}.w_zero"] = freeze_array(np.zeros(ws.shape, np.int8))
    deq_x = Node.make(
        f"{p}.dequantize_x",
        OpType.DEQUANTIZE,
        [quant.outputs[0], quant.inputs[1], quant.inputs[2]],
        [f"{p}.x_dq"],
        axis=0,
    )
    deq_w = Node.make(
        f"{p}.dequantize_w",
        OpType.DEQUANTIZE,
        [f"{p}.w_q", f"{p}.w_scale", f"{p}.w_zero"],
        [f"{p}.w_dq"],
        axis=0,
    )
    conv = Node(
        p, OpType.CONV, (f"{p}.x_dq", f"{p}.w_dq", *node.inputs[2:]), node.outputs, node.attrs
    )
    return [quant, deq_x, deq_w, conv]


def _linear(
    node: Node, quant: Node, w: np.ndarray, x_scale: float, consts: dict[str, np.ndarray]
) -> list[Node]:
    p = node.name
    wq, ws = int8_weights(w, axis=1)
    consts[f"{p}.w_q"] = freeze_array(wq)
    consts[f"{p}.w_zero"] = freeze_array(np.asarray(np.int8(0)))
    consts[f"{p}.acc_scale"] = freeze_array((ws.astype(np.float64) * x_scale).astype(np.float32))
    acc, deq = f"{p}.acc", f"{p}.deq"
    mm = Node.make(
        f"{p}.matmul_int8",
        OpType.MATMUL_INTEGER,
        [quant.outputs[0], f"{p}.w_q", quant.inputs[2], f"{p}.w_zero"],
        [acc],
    )
    dq = Node.make(f"{p}.dequantize_acc", OpType.DEQUANTIZE, [acc, f"{p}.acc_scale"], [deq], axis=1)
    bias = node.input(2)
    if not bias:
        if node.attr("relu", 0):
            return [quant, mm, dq, Node.make(p, OpType.RELU, [deq], node.outputs)]
        return [quant, mm, Node(dq.name, dq.op, dq.inputs, node.outputs, dq.attrs)]
    add = Node.make(p, OpType.ADD, [deq, bias], node.outputs, relu=node.attr("relu", 0))
    return [quant, mm, dq, add]
