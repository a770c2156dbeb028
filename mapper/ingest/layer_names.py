"""The usual names of an accelerator stack's layers, top to bottom: the vocabulary
``stackmap init`` (:mod:`mapper.ingest.propose`) matches folder names against.

Each :class:`Guess` gives a layer's id, the folder names that suggest it, and the title and
stock description a proposed ``[[layers]]`` entry gets when the folder has no README to say
better. The vocabulary is a hint: folders that match none are proposed from the code's own
dependencies instead.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Guess:
    id: str
    names: tuple[str, ...]
    title: str
    description: str


#: Top to bottom.
GUESSES = (
    Guess(
        "adapter",
        ("adapter", "adapters", "frontend", "frontends", "framework", "bridge"),
        "Framework adapter",
        "Imports framework models (PyTorch, ONNX, TensorFlow) into the compiler's IR.",
    ),
    Guess(
        "compiler",
        ("compiler", "compilers", "codegen", "passes", "graph_compiler"),
        "Graph compiler",
        "IR, optimisation passes, memory planning and emission of executables.",
    ),
    Guess(
        "runtime",
        ("runtime", "rt", "executor", "scheduler"),
        "Runtime",
        "Loads executables, allocates device memory, schedules work on streams, recovers "
        "from faults.",
    ),
    Guess(
        "umd",
        ("umd", "user_mode_driver", "usermode", "userspace", "libdrv"),
        "User-mode driver",
        "Builds command buffers, manages contexts and submits work to the kernel driver.",
    ),
    Guess(
        "hal",
        ("hal", "hardware_abstraction"),
        "Hardware abstraction layer",
        "Uniform access to device registers, queues and memory across chips.",
    ),
    Guess(
        "kernels",
        ("kernel", "kernels", "ops", "operators"),
        "Compute kernels",
        "Device kernels (CUDA or vendor ISA) implementing the operators.",
    ),
    Guess(
        "kmd",
        ("kmd", "driver", "drivers", "kernel_driver", "kernel_mode_driver"),
        "Kernel-mode driver",
        "ioctl entry point, device memory and page tables, command queues, interrupts, reset.",
    ),
    Guess(
        "firmware",
        ("firmware", "fw", "microcode"),
        "Firmware",
        "Code running on the device's own controllers.",
    ),
)
