"""The long short-term memory: LSTM (ONNX LSTM, opsets 7, 14 and 22).

Attributes: ``direction`` (forward, reverse or bidirectional; default forward), ``layout`` (0 or
1; default 0), ``input_forget`` (0 or 1; default 0), ``activations`` (ONNX's activation names,
RNN's, three per direction — f, g then h — joined by commas; default Sigmoid,Tanh,Tanh each),
``activation_alpha`` and ``activation_beta`` (one number per activation; default 0 each) and
``clip`` (a number > 0; absent: no clip); another value an InvalidRequestError on that attribute.

Inputs and outputs as RNN's (:mod:`stack.umd.translators.rnn`: X, W, R, then the optional
inputs, a trailing run, Y in its logical order and Y_h, with the same errors), but W [D, 4H, I],
R [D, 4H, H], B [D, 8H], initial_c [D, N, H] (layout 1: [N, D, H]) and P [D, 3H] after
initial_h, and a third output, Y_c of initial_h's shape.
"""

from __future__ import annotations

from stack.kmd.kernels.ids import KernelId
from stack.kmd.kernels.lstm import shapes as kernel_shapes
from stack.umd.ops import OpKind, OpRequest
from stack.umd.translators.rnn import RecurrentTranslator, Shape, recurrent_immediates


def immediates(req: OpRequest) -> dict[str, int | float]:
    """The kernel's immediates from the request's attributes, checked."""
    return recurrent_immediates("LSTM", req, LSTMTranslator.defaults, LSTMTranslator.flag)[0]


class LSTMTranslator(RecurrentTranslator):
    """LSTM → the recurrence kernel on X, W, R and the optional B, sequence_lens, initial_h,
    initial_c and P, Y (in its logical order), Y_h and Y_c, with the direction, layout,
    input_forget, clip and activations as its immediates."""

    family = "lstm"
    ops = frozenset({OpKind.LSTM})
    name, kernel, gates, flag = "LSTM", KernelId.LSTM, 4, "input_forget"
    defaults = ("Sigmoid", "Tanh", "Tanh")
    names = ("W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P")
    outputs = ("Y", "Y_h", "Y_c")

    def shapes(self, x: Shape, w: Shape, layout: int) -> dict[str, Shape]:
        return kernel_shapes(x, w, layout)
