"""The operator-module API of the KMD (:mod:`stack.kmd.opmod`), re-exported for the layers above
the UMD: descriptors, modules, device capabilities, versions and selection. The runtime, which
may not import the KMD, reaches it here."""

from stack.kmd.opmod import *  # noqa: F403 - this module is the re-export
from stack.kmd.opmod import __all__ as __all__
