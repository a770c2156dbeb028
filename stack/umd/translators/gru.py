"""The gated recurrent unit: GRU (ONNX GRU, opsets 7, 14 and 22).

Attributes: ``direction`` (forward, reverse or bidirectional; default forward), ``layout`` (0 or
1; default 0), ``linear_before_reset`` (0 or 1; default 0), ``activations`` (ONNX's activation
names, RNN's, two per direction — f then g — joined by commas; default Sigmoid,Tanh each),
``activation_alpha`` and ``activation_beta`` (one number per activation; default 0 each) and
``clip`` (a number > 0; absent: no clip); another value an InvalidRequestError on that attribute.

Inputs and outputs as RNN's (:mod:`stack.umd.translators.rnn`: X, W, R, then the optional B,
sequence_lens I32 and initial_h, a trailing run; Y in its logical order and Y_h, with the same
errors), but W [D, 3H, I], R [D, 3H, H] and B [D, 6H].
"""

from __future__ import annotations

from stack.kmd.kernels.gru import shapes as kernel_shapes
from stack.kmd.kernels.ids import KernelId
from stack.umd.ops import OpKind, OpRequest
from stack.umd.translators.rnn import RecurrentTranslator, Shape, recurrent_immediates


def immediates(req: OpRequest) -> dict[str, int | float]:
    """The kernel's immediates from the request's attributes, checked."""
    return recurrent_immediates("GRU", req, GRUTranslator.defaults, GRUTranslator.flag)[0]


class GRUTranslator(RecurrentTranslator):
    """GRU → the recurrence kernel on X, W, R and the optional B, sequence_lens and initial_h,
    Y (in its logical order) and Y_h, with the direction, layout, linear_before_reset, clip and
    activations as its immediates."""

    family = "gru"
    ops = frozenset({OpKind.GRU})
    name, kernel, gates, flag = "GRU", KernelId.GRU, 3, "linear_before_reset"
    defaults = ("Sigmoid", "Tanh")
    names = ("W", "R", "B", "sequence_lens", "initial_h")
    outputs = ("Y", "Y_h")

    def shapes(self, x: Shape, w: Shape, layout: int) -> dict[str, Shape]:
        return kernel_shapes(x, w, layout)
