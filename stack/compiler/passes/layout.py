"""Layout assignment: choose the memory layout of every 4-D activation the conv family touches.

Every node of the conv family (Conv, DeformConv, ConvInteger, QLinearConv, pooling, BatchNorm)
first gets ``layout="NCHW"``; a node of that family whose input is not 4-D is refused here
rather than at run time. Then, for the CPU device (``CompileOptions.target`` CPU or None; a GPU
target and a quantized compile keep NCHW), the float32 2-D Conv, MaxPool (without Indices),
AveragePool and GlobalAveragePool nodes run NHWC (oneDNN's layout: no reorder per convolution):

* such a node reads its activations (X; a Conv's fused residual too) in NHWC and writes an NHWC
  value named ``<value>.nhwc``, its static type the permuted shape;
* a layout-agnostic node (Add, Sub, Mul, Div, Relu, elementwise Unary) whose 4-D operands all
  have NHWC twins, the others single elements, joins the region the same way;
* every other reader of a value that exists only in NHWC (a Reshape, Flatten, Gemm, Concat, a
  BatchNorm, a graph output ...) gets it back in NCHW from a ``Transpose`` (perm 0,3,1,2)
  ``<value>.to_nchw`` writing the original name; an NCHW value (a graph input, an NCHW node's
  output) entering the region goes through a ``Transpose`` (perm 0,2,3,1) ``<value>.to_nhwc``.
  Each conversion is made once, just before its first reader.

Axis-dependent ops are never in a region (the region is cut before them), so no attribute needs
remapping. The emitter records each node's layout in its op record (Executable format 2.1).
"""

from __future__ import annotations

from stack.compiler.errors import VerifyError
from stack.compiler.ir import ElemType, Graph, Node, OpType, TensorType
from stack.compiler.layouts import ACTIVATION_INPUTS, NCHW, NHWC, TO_NCHW, TO_NHWC, permuted
from stack.compiler.options import CompileOptions, Target
from stack.compiler.passes import register

NCHW_OPS = frozenset(
    {
        OpType.CONV,
        OpType.DEFORM_CONV,
        OpType.CONV_INTEGER,
        OpType.QLINEARCONV,
        OpType.MAXPOOL,
        OpType.AVGPOOL,
        OpType.GLOBALAVGPOOL,
        OpType.GLOBALLPPOOL,
        OpType.MAXROIPOOL,
        OpType.ROIALIGN,
        OpType.BATCHNORM,
    }
)
#: Ops whose result does not depend on the axis order of same-shaped operands.
AGNOSTIC = frozenset({OpType.ADD, OpType.SUB, OpType.MUL, OpType.DIV, OpType.RELU, OpType.UNARY})


def assign_layout(graph: Graph, options: CompileOptions) -> Graph:
    """Return ``graph`` with ``layout`` attributes, and NHWC regions on the CPU device."""
    nodes = []
    for node in graph.nodes:
        if node.op in NCHW_OPS:
            t = graph.type_of(node.inputs[0])
            if node.op is not OpType.BATCHNORM and (t is None or len(t.shape) != 4):
                raise VerifyError(
                    f"{node.op.value} needs a 4-D NCHW input, got {t}",
                    check="layout",
                    op=node.op.value,
                    node=node.name,
                )
            node = node.with_attrs(layout=NCHW)
        nodes.append(node)
    graph = graph.replace(nodes=tuple(nodes))
    if options.target is Target.GPU or options.quantize is not None:
        return graph
    return nhwc_regions(graph)


def runs_nhwc(node: Node, graph: Graph) -> bool:
    """Whether ``node`` is a float32 2-D Conv or pool that runs NHWC on the CPU device."""
    if node.op not in ACTIVATION_INPUTS or (node.op is OpType.MAXPOOL and len(node.outputs) > 1):
        return False
    x, y = graph.type_of(node.inputs[0]), graph.type_of(node.outputs[0])
    if x is None or y is None:
        return False
    return len(x.shape) == len(y.shape) == 4 and x.dtype is ElemType.F32


class _Rewriter:
    """The rewritten node list and which values exist in which layout."""

    def __init__(self, graph: Graph) -> None:
        self.graph = graph
        self.types: dict[str, TensorType] = dict(graph.types)
        self.nodes: list[Node] = []
        self.twin: dict[str, str] = {}  # value -> its NHWC twin
        self.nchw: set[str] = {*graph.inputs, *graph.constants}  # values that exist in NCHW

    def to_nhwc(self, value: str) -> str:
        """``value``'s NHWC twin, converted from NCHW on first use."""
        if value not in self.twin:
            twin = f"{value}.nhwc"
            self.types[twin] = permuted(self.type_of(value), TO_NHWC)
            self.nodes.append(
                Node.make(f"{value}.to_nhwc", OpType.TRANSPOSE, (value,), (twin,), perm=TO_NHWC)
            )
            self.twin[value] = twin
        return self.twin[value]

    def to_nchw(self, value: str) -> str:
        """``value`` in NCHW, converted from its NHWC twin on first use."""
        if value and value not in self.nchw and value in self.twin:
            twin = self.twin[value]
            self.nodes.append(
                Node.make(f"{value}.to_nchw", OpType.TRANSPOSE, (twin,), (value,), perm=TO_NCHW)
            )
            self.nchw.add(value)
        return value

    def nhwc_output(self, value: str) -> str:
        twin = f"{value}.nhwc"
        self.types[twin] = permuted(self.type_of(value), TO_NHWC)
        self.twin[value] = twin
        return twin

    def type_of(self, value: str) -> TensorType:
        """The static type of ``value`` (a twin's included)."""
        t = self.types.get(value) or self.graph.type_of(value)
        assert t is not None, value  # the pass runs on a typed graph
        return t


def _joins(node: Node, rw: _Rewriter) -> bool:
    """Whether a layout-agnostic node joins the NHWC region of its operands."""
    if node.op not in AGNOSTIC or len(node.outputs) != 1:
        return False
    big = [v for v in node.inputs if v and rw.type_of(v).numel > 1]
    out = rw.type_of(node.outputs[0])
    return bool(big) and all(v in rw.twin and rw.type_of(v).shape == out.shape for v in big)


def nhwc_regions(graph: Graph) -> Graph:
    """Put the NHWC-capable nodes (:func:`runs_nhwc`) and the agnostic nodes between them in
    NHWC, with Transpose conversions at the regions' edges (see the module docstring)."""
    rw = _Rewriter(graph)
    for node in graph.nodes:
        if runs_nhwc(node, graph):
            acts = ACTIVATION_INPUTS[node.op]
            ins = tuple(rw.to_nhwc(v) if v and i in acts else v for i, v in enumerate(node.inputs))
            outs = (rw.nhwc_output(node.outputs[0]), *node.outputs[1:])
            rw.nodes.append(Node(node.name, node.op, ins, outs, node.attrs).with_attrs(layout=NHWC))
        elif _joins(node, rw):
            ins = tuple(rw.twin.get(v, v) if v else v for v in node.inputs)
            outs = (rw.nhwc_output(node.outputs[0]),)
            rw.nodes.append(Node(node.name, node.op, ins, outs, node.attrs).with_attrs(layout=NHWC))
        else:
            ins = tuple(rw.to_nchw(v) for v in node.inputs)
            rw.nodes.append(Node(node.name, node.op, ins, node.outputs, node.attrs))
            rw.nchw.update(v for v in node.outputs if v)
    for value in graph.outputs:
        rw.to_nchw(value)
    return graph.replace(nodes=tuple(rw.nodes), types=rw.types)


register("layout", assign_layout)
