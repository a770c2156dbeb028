"""How the scatter conformance tests' sequential loops combine an update with the value it
lands on, per ``ScatterReduction`` (written with NumPy, not taken from the kernel)."""

from __future__ import annotations

import numpy as np

from stack.kmd.kernels.index import ScatterReduction

COMBINE = {
    ScatterReduction.NONE: lambda old, new: new,
    ScatterReduction.ADD: np.add,
    ScatterReduction.MUL: np.multiply,
    ScatterReduction.MAX: np.maximum,
    ScatterReduction.MIN: np.minimum,
}
