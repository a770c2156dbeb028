"""The importer of LSTM (opsets 7, 14 and 22; the importer takes no model below opset 7, so
LSTM-1's output_sequence never reaches it), the long short-term memory; in a module of its own,
as RNN's and GRU's, whose importer (:func:`stack.adapter.ops_rnn.import_recurrent`),
activations and resolution of their alpha and beta it shares.

The IR ``LSTM`` takes ONNX's inputs in ONNX's order: X [S, N, I] (``layout`` 1: [N, S, I];
float16, float32 or float64, ONNX's types with an IR type), W [D, 4H, I], R [D, 4H, H] and the
optional B [D, 8H], sequence_lens [N] (int32), initial_h and initial_c [D, N, H] (layout 1:
[N, D, H]) and P [D, 3H], all but sequence_lens of X's type; one left out before a given one
takes zero biases, full lengths, a zero state or zero peepholes, the kernel's optional inputs
being a trailing run. The attributes cross resolved: ``direction``, ``layout`` (0 below opset
14), ``input_forget`` (0, or 1 for any other value, as onnxruntime reads it: the forget gate
1 - the input gate), ``activations`` (ONNX's names, three per direction — f, g then h —, any
case, joined by commas; default Sigmoid,Tanh,Tanh), ``activation_alpha`` and
``activation_beta`` (one number per activation, 0 where it takes none) and ``clip`` when given.
It always has three outputs, Y, Y_h and Y_c: one the node leaves unnamed gets a fresh value,
which nothing reads.

What ONNX forbids is a ModelFormatError naming the node: a missing or extra input or output,
operands of another type or shape, a hidden_size other than W's, an unknown direction or
activation, a count of activations other than 3D, layout below opset 14. What the stack does
not run is an UnsupportedOpError naming the node: a clip not above 0, and an activation_alpha
or activation_beta that onnxruntime and ONNX's reference would read differently (as GRU's). A
bfloat16 X, which opset 22 allows, has no IR type and is refused at the graph input, an
UnsupportedTypeError naming the tensor. Constant operands fold at import.
"""

from __future__ import annotations

import onnx

from stack.adapter.context import ImportContext
from stack.adapter.ops_rnn import import_recurrent
from stack.adapter.registry import register
from stack.compiler.lstm import LSTM, attribute_problem, problem


@register("LSTM")
def lstm(ctx: ImportContext, proto: onnx.NodeProto, name: str) -> None:
    """H_t = o_t h(C_t), C_t = f_t C_(t-1) + i_t c_t in each direction (opset 7+): the IR
    ``LSTM`` of X's type, its attributes resolved."""
    import_recurrent(ctx, proto, name, LSTM, (problem, attribute_problem))
