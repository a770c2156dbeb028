"""The kernel-mode driver shim and its kernel library: the bottom of the stack."""
