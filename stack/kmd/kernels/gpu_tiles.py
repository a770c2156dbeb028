"""The GPU meaning of a GEMM or CONV2D launch configuration: the block is the tile.

On a GPU device the float32 GEMM and CONV2D kernels run one of two implementations, chosen by
the ``block`` the UMD encoded in the blob (:class:`stack.kmd.blob.LaunchConfig`):

* ``block = (0, 0, 0)`` — **library**: the vendor library path (cuBLAS through
  ``cupy.matmul``; im2col + cuBLAS for a convolution). Grid and shared memory are unused
  (encoded ``grid = (1, 1, 1)``, ``shared_mem = 0``). The UMD's default.
* ``block = (T, T, 1)``, T ≥ 1 — **tiled**: the hand shared-memory kernel
  (``cuda/tiled_gemm.cu``) with T x T threads per block, each computing one output element;
  ``grid = (ceil(cols / T), ceil(rows / T), batches)`` over the output matrix (GEMM: rows and
  columns of Y, one batch; CONV2D: output channels per group x output pixels, batches =
  images x groups); ``shared_mem = 2 * T * T * 4`` bytes (one tile of each operand).

A tiled launch is valid on a device when T x T ≤ its max threads per block, its shared memory
fits the per-block limit, and the grid's y and z stay ≤ 65535 (:func:`unfit`). The tuner times
the valid block sizes against the library; the UMD encodes the tuned one
(``stack.umd.launch_gpu``); the kernel checks that the grid it is given is the one its block
implies and refuses a launch that is not (the fence faults with the reason).

Other dtypes, and a CONV2D with a fused max pool, always take the library path.
"""

from __future__ import annotations

import math

from stack.kmd.blob import LaunchConfig
from stack.kmd.kernels.ids import KernelId

#: Kernels whose GPU implementation reads the launch's block.
TILED = frozenset({KernelId.GEMM, KernelId.CONV2D})
#: The block edge that selects the library path.
LIBRARY = 0
LIBRARY_LAUNCH = LaunchConfig((1, 1, 1), (0, 0, 0), 0)
#: CUDA's limit on grid dimensions y and z.
MAX_GRID_YZ = 65535
FLOAT32_BYTES = 4


def extent(kernel_id: KernelId, out_shape: tuple[int, ...], group: int = 1) -> tuple[int, int, int]:
    """(rows, cols, batches) of the output matrix a tiled launch covers (see the module
    docstring); ValueError for a kernel that has no tiled implementation."""
    if kernel_id is KernelId.GEMM:
        rows, cols = out_shape
        return rows, cols, 1
    if kernel_id is KernelId.CONV2D:
        n, m, oh, ow = out_shape
        return m // max(group, 1), oh * ow, n * max(group, 1)
    raise ValueError(f"{kernel_id.name} has no tiled GPU kernel")


def tiled_launch(
    kernel_id: KernelId, out_shape: tuple[int, ...], block: int, group: int = 1
) -> LaunchConfig:
    """The launch configuration of a ``block`` x ``block`` tiled launch (LIBRARY_LAUNCH for
    block 0)."""
    if block == LIBRARY:
        return LIBRARY_LAUNCH
    rows, cols, batches = extent(kernel_id, out_shape, group)
    grid = (max(1, math.ceil(cols / block)), max(1, math.ceil(rows / block)), max(1, batches))
    return LaunchConfig(grid, (block, block, 1), 2 * block * block * FLOAT32_BYTES)


def unfit(
    block: int,
    max_threads_per_block: int,
    shared_mem_per_block: int,
    launch: LaunchConfig | None = None,
) -> str | None:
    """Why a ``block`` x ``block`` tiled launch cannot run on a device with these limits
    (None when it can; block 0, the library, always can)."""
    if block == LIBRARY:
        return None
    if block < 1:
        return f"block {block} is not a tile edge"
    if block * block > max_threads_per_block:
        return f"{block}x{block} threads exceed {max_threads_per_block} per block"
    shared = 2 * block * block * FLOAT32_BYTES
    if shared > shared_mem_per_block:
        return f"{shared} bytes of shared memory exceed {shared_mem_per_block} per block"
    if launch is not None and max(launch.grid[1], launch.grid[2]) > MAX_GRID_YZ:
        return f"grid {launch.grid} exceeds {MAX_GRID_YZ} in y or z"
    return None
