"""Launches over tensors of zero elements: one whose outputs are all empty runs nothing (a Conv
of a batch of 0 once failed in its kernel with a KERNEL fault), submitted or recorded in a
command buffer; one with an empty input but a non-empty output still computes it."""

from __future__ import annotations

import numpy as np

from stack.kmd import KernelId

from .conftest import Rig

CONV_INTS = (1, 1, 1, 1, 1, 1, 1, 1, 1, 0)  # strides, pads t/l/b/r, dilations, group, relu


def test_conv_of_a_batch_of_zero_is_empty(backend_rig: Rig) -> None:
    x = np.zeros((0, 1, 5, 5), np.float32)
    w = np.ones((2, 1, 3, 3), np.float32)
    out = backend_rig.run(KernelId.CONV2D, [x, w], (0, 2, 5, 5), ints=CONV_INTS)
    assert (out.shape, out.dtype) == ((0, 2, 5, 5), np.float32)


def test_a_recorded_empty_launch_runs_next_to_a_full_one(rig: Rig) -> None:
    x, w = rig.put(np.zeros((0, 1, 5, 5), np.float32)), rig.put(np.ones((2, 1, 3, 3), np.float32))
    empty = rig.empty((0, 2, 5, 5))
    a = rig.put(np.array([-1.0, 2.0, -3.0, 4.0], np.float32))
    relu = rig.empty((4,))
    blobs = [
        rig.blob(KernelId.CONV2D, [x, w, empty], ints=CONV_INTS),
        rig.blob(KernelId.RELU, [a, relu]),
    ]
    buf = rig.dev.create_cmdbuf(rig.ctx, blobs)
    for _ in range(2):
        rig.value += 1
        rig.dev.execute_cmdbuf(rig.ctx, rig.queue, buf, signal=(rig.fence, rig.value))
        rig.dev.wait_fence(rig.ctx, rig.fence, rig.value, timeout_s=30)
        got = rig.dev.read_array(rig.ctx, relu.addr, relu.shape, relu.dtype)
        np.testing.assert_array_equal(got, np.array([0.0, 2.0, 0.0, 4.0], np.float32))


def test_an_empty_input_with_a_full_output_still_computes(rig: Rig) -> None:
    a, b = rig.put(np.zeros((2, 0), np.float32)), rig.put(np.zeros((0, 3), np.float32))
    out = rig.put(np.full((2, 3), 7.0, np.float32))  # stale values the GEMM must overwrite
    value = rig.submit([rig.blob(KernelId.GEMM, [a, b, out], ints=(0, 0, 0), floats=(1.0, 0.0))])
    rig.dev.wait_fence(rig.ctx, rig.fence, value, timeout_s=30)
    got = rig.dev.read_array(rig.ctx, out.addr, out.shape, out.dtype)
    np.testing.assert_array_equal(got, np.zeros((2, 3), np.float32))
