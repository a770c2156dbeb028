"""Op fusion: fold a bias Add and a trailing Relu into the kernel that produces the value.

Patterns (the producer's output must feed only the absorbed op and must not be a graph output):

* ``Conv -> Add(const [C,1,1] | [1,C,1,1])`` -> Conv with bias;
* ``MatMul(x, W const 2-D) -> Add(const [N] | [1,N])`` -> Gemm with bias (``x`` of rank > 2 is
  viewed as 2-D through Reshape views, which the planner turns into aliases);
* ``Gemm(A, B) -> Add(const [N] | [1,N])`` -> Gemm with bias C (beta 1);
* ``Conv -> Add(y, r)`` with ``r`` an activation of the output's shape -> Conv with the
  residual input ``r`` (a zero bias is added when the Conv has none), placed where the Add was
  (``r`` may be computed after the Conv); the Add's ``relu`` carries over;
* ``Conv | Gemm | Add | BatchNormalization -> Relu`` -> the same op with ``relu=1`` (the
  kernels' fused epilogue: bias, residual and ReLU applied while the output tile is in cache),
  also through a Reshape between them (the view a rank-3 MatMul's Gemm is read through: ReLU
  is element-wise, so it commutes with the view);
* ``Conv (no residual) -> MaxPool`` (dilations 1) -> Conv with a fused max pool
  (``pool_kernel``, ``pool_strides``, ``pool_pads``, ``pool_ceil``): the kernel pools each tile
  of output channels after its epilogue, so the full-size convolution output never becomes an
  intermediate the memory plan has to hold (matched after the Relu fusion, so
  ``Conv -> Relu -> MaxPool`` fuses both);
* ``Mul(MatMul(p, q), scalar const)`` with ``p`` or ``q`` a Gemm of constant weights seen through
  views and Transposes -> the scale folded into those weights, the Mul gone
  (:mod:`stack.compiler.passes.fold_scale`: a transformer's attention scale).
"""

from __future__ import annotations

import numpy as np

from stack.compiler.ir import Graph, Node, OpType, TensorType, freeze_array
from stack.compiler.options import CompileOptions
from stack.compiler.passes import register
from stack.compiler.passes._match import sole_consumer
from stack.compiler.passes.fold_scale import fold_scale

RELU_HOSTS = (OpType.CONV, OpType.GEMM, OpType.ADD, OpType.BATCHNORM)


def fuse(graph: Graph, options: CompileOptions) -> Graph:
    """Apply the fusion patterns until none matches."""
    while True:
        rewritten = _fuse_once(graph)
        if rewritten is None:
            return graph
        graph = rewritten


def _other(add: Node, value: str) -> str:
    return add.inputs[1] if add.inputs[0] == value else add.inputs[0]


def _fuse_once(graph: Graph) -> Graph | None:
    users = graph.consumers()
    for node in graph.nodes:
        if node.op is OpType.MUL:
            folded = fold_scale(graph, node, users)
            if folded is not None:
                return folded
        nxt = sole_consumer(graph, users, node.outputs[0]) if node.outputs else None
        if nxt is None:
            continue
        if nxt.op is OpType.RELU and node.op in RELU_HOSTS and not node.attr("relu", 0):
            fused = node.with_attrs(relu=1)
            return _splice(graph, node, nxt, [Node(*_fields(fused, nxt.outputs))])
        if nxt.op is OpType.RESHAPE and node.op in RELU_HOSTS and not node.attr("relu", 0):
            relu = sole_consumer(graph, users, nxt.outputs[0])
            if relu is not None and relu.op is OpType.RELU:
                view = Node(*_fields(nxt, relu.outputs))
                nodes = [n for n in graph.nodes if n is not relu]
                nodes = [node.with_attrs(relu=1) if n is node else view if n is nxt else n
                         for n in nodes]  # fmt: skip
                return graph.replace(nodes=tuple(nodes))
        if nxt.op is OpType.ADD and node.op is OpType.CONV and not node.input(2):
            bias = _channel_bias(
                graph, _other(nxt, node.outputs[0]), graph.type_of(node.outputs[0])
            )
            if bias is not None:
                name = f"{node.name}.bias"
                conv = Node(node.name, node.op, (*node.inputs[:2], name), nxt.outputs, node.attrs)
                return _splice(graph, node, nxt, [conv], {name: bias})
        if nxt.op is OpType.ADD and node.op is OpType.CONV and not node.attr("relu", 0):
            with_residual = _conv_residual(graph, node, nxt)
            if with_residual is not None:
                return with_residual
        if nxt.op is OpType.ADD and node.op is OpType.GEMM and len(node.inputs) == 2:
            bias = _row_bias(graph, _other(nxt, node.outputs[0]), graph.type_of(node.outputs[0]))
            if bias is not None:
                name = f"{node.name}.bias"
                gemm = Node(node.name, node.op, (*node.inputs, name), nxt.outputs, node.attrs)
                return _splice(graph, node, nxt, [gemm.with_attrs(beta=1.0)], {name: bias})
        if nxt.op is OpType.MAXPOOL and node.op is OpType.CONV and _poolable(node, nxt):
            fused = node.with_attrs(
                pool_kernel=nxt.attr("kernel_shape"),
                pool_strides=nxt.attr("strides", (1, 1)),
                pool_pads=nxt.attr("pads", (0, 0, 0, 0)),
                pool_ceil=int(nxt.attr("ceil_mode", 0)),
            )
            return _splice(graph, node, nxt, [Node(*_fields(fused, nxt.outputs))])
        if nxt.op is OpType.ADD and node.op is OpType.MATMUL:
            bias_fused = _matmul_bias(graph, node, nxt)
            if bias_fused is not None:
                return bias_fused
    return None


def _poolable(conv: Node, pool: Node) -> bool:
    """A Conv without residual or pool of its own, and a MaxPool the kernel can fuse."""
    dilations = tuple(pool.attr("dilations", (1, 1)))
    return not conv.input(3) and conv.attr("pool_kernel") is None and dilations == (1, 1)


def _fields(node: Node, outputs: tuple[str, ...]) -> tuple:
    return (node.name, node.op, node.inputs, outputs, node.attrs)


def _splice(
    graph: Graph, first: Node, second: Node, new: list[Node], consts: dict | None = None
) -> Graph:
    nodes: list[Node] = []
    for n in graph.nodes:
        if n is first:
            nodes.extend(new)
        elif n is not second:
            nodes.append(n)
    return graph.replace(nodes=tuple(nodes), constants={**graph.constants, **(consts or {})})


def _conv_residual(graph: Graph, conv: Node, add: Node) -> Graph | None:
    out = conv.outputs[0]
    other = _other(add, out)
    if other == out or other in graph.constants or conv.input(3):
        return None
    out_type = graph.type_of(out)
    if out_type is None or graph.type_of(other) != out_type:
        return None
    consts = {}
    bias = conv.input(2)
    if not bias:
        bias = f"{conv.name}.bias"
        consts[bias] = freeze_array(np.zeros(out_type.shape[1], out_type.dtype.numpy))
    fused = Node(conv.name, conv.op, (*conv.inputs[:2], bias, other), add.outputs, conv.attrs)
    if add.attr("relu", 0):
        fused = fused.with_attrs(relu=1)
    nodes = tuple(fused if n is add else n for n in graph.nodes if n is not conv)
    return graph.replace(nodes=nodes, constants={**graph.constants, **consts})


def _channel_bias(graph: Graph, value: str, out: TensorType | None) -> np.ndarray | None:
    arr = graph.constants.get(value)
    if arr is None or out is None or len(out.shape) != 4:
        return None
    channels = out.shape[1]
    if arr.shape not in ((channels, 1, 1), (1, channels, 1, 1)) or arr.dtype != out.dtype.numpy:
        return None
    return freeze_array(arr.reshape(channels))


def _row_bias(graph: Graph, value: str, out: TensorType | None) -> np.ndarray | None:
    arr = graph.constants.get(value)
    if arr is None or out is None or len(out.shape) != 2 or arr.dtype != out.dtype.numpy:
        return None
    n = out.shape[1]
    return freeze_array(arr.reshape(n)) if arr.shape in ((n,), (1, n)) else None


def _matmul_bias(graph: Graph, mm: Node, add: Node) -> Graph | None:
    w = graph.constants.get(mm.inputs[1])
    x_type, out = graph.type_of(mm.inputs[0]), graph.type_of(mm.outputs[0])
    bias = graph.constants.get(_other(add, mm.outputs[0]))
    if w is None or bias is None or x_type is None or out is None or w.ndim != 2:
        return None
    n = w.shape[1]
    if bias.shape not in ((n,), (1, n)) or len(x_type.shape) < 2 or bias.dtype != w.dtype:
        return None
    b_name = f"{mm.name}.bias"
    consts = {b_name: freeze_array(bias.reshape(n))}
    if len(x_type.shape) == 2:
        gemm = Node(mm.name, OpType.GEMM, (*mm.inputs, b_name), add.outputs)
        return _splice(graph, mm, add, [gemm], consts)
    rows = int(np.prod(x_type.shape[:-1]))
    flat_in, flat_out = f"{mm.name}.in2d", f"{mm.name}.out2d"
    new = [
        Node.make(
            f"{mm.name}.view_in",
            OpType.RESHAPE,
            [mm.inputs[0]],
            [flat_in],
            shape=(rows, x_type.shape[-1]),
        ),
        Node(mm.name, OpType.GEMM, (flat_in, mm.inputs[1], b_name), (flat_out,)),
        Node.make(f"{mm.name}.view_out", OpType.RESHAPE, [flat_out], add.outputs, shape=out.shape),
    ]
    types = {
        **graph.types,
        flat_in: TensorType(x_type.dtype, (rows, x_type.shape[-1])),
        flat_out: TensorType(out.dtype, (rows, n)),
    }
    return _splice(graph, mm, add, new, consts).replace(types=types)


register("fuse", fuse)
