"""The launch configuration of the launch running on this thread, for kernels that read it.

A kernel function takes tensors and immediates (``fn(ins, outs, ints, floats)``); the geometry
the UMD encoded in the blob (:class:`stack.kmd.blob.LaunchConfig`) reaches the kernels that use
it through this thread-local binding: the queue binds each launch's configuration just before
calling its kernel (:func:`stack.kmd.command.execute`, GPU lanes). Kernels that ignore it are
unaffected; outside a launch :func:`current` is the default configuration.
"""

from __future__ import annotations

import threading

from stack.kmd.blob import LaunchConfig

DEFAULT = LaunchConfig()
_local = threading.local()


def bind(config: LaunchConfig) -> None:
    """Make ``config`` the configuration of the launch about to run on this thread."""
    _local.config = config


def current() -> LaunchConfig:
    """The configuration bound on this thread (DEFAULT when none is)."""
    config: LaunchConfig = getattr(_local, "config", DEFAULT)
    return config
