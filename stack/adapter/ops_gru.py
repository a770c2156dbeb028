"""The importer of GRU (opsets 7, 14 and 22; the importer takes no model below opset 7, so
GRU-1's output_sequence and GRU-3's never reach it), the gated recurrent unit; in a module of
its own, as RNN's, whose importer (:func:`stack.adapter.ops_rnn.import_recurrent`),
activations and resolution of their alpha and beta it shares.

The IR ``GRU`` takes ONNX's inputs in ONNX's order: X [S, N, I] (``layout`` 1: [N, S, I]; float16,
float32 or float64, ONNX's types with an IR type), W [D, 3H, I], R [D, 3H, H] and the optional B
[D, 6H], sequence_lens [N] (int32) and initial_h [D, N, H] (layout 1: [N, D, H]), all but
sequence_lens of X's type; one left out before a given one takes zero biases, full lengths or a
zero state, the kernel's optional inputs being a trailing run. The attributes cross resolved:
``direction``, ``layout`` (0 below opset 14), ``linear_before_reset`` (0, or 1 for any other
value), ``activations`` (ONNX's names, two per direction — f then g —, any case, joined by
commas; default Sigmoid,Tanh), ``activation_alpha`` and ``activation_beta`` (one number per
activation, 0 where it takes none) and ``clip`` when given. It always has two outputs, Y and
Y_h: one the node leaves unnamed gets a fresh value, which nothing reads.

What ONNX forbids is a ModelFormatError naming the node: a missing or extra input or output,
operands of another type or shape, a hidden_size other than W's, an unknown direction or
activation, a count of activations other than 2D, layout below opset 14. What the stack does
not run is an UnsupportedOpError naming the node: a clip not above 0, and an activation_alpha
or activation_beta that onnxruntime (which deals the values out in order to the activations
that take one) and ONNX's reference would read differently: the stack takes one when every
activation takes it and it holds one value per activation, and leaves out one that no
activation takes (as the default Sigmoid and Tanh). A bfloat16 X, which opset 22 allows, has no
IR type and is refused at the graph input, an UnsupportedTypeError naming the tensor. Constant
operands fold at import.
"""

from __future__ import annotations

import onnx

from stack.adapter.context import ImportContext
from stack.adapter.ops_rnn import import_recurrent
from stack.adapter.registry import register
from stack.compiler.gru import GRU, attribute_problem, problem


@register("GRU")
def gru(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """H_t = (1 - z_t) h_t + z_t H_(t-1) in each direction (opset 7+): the IR ``GRU`` of X's
    type, its attributes resolved."""
    import_recurrent(ctx, proto, name, GRU, (problem, attribute_problem))
