"""The runtime: Executable format, loader, stream scheduler, executor, fault recovery.

Imports only ``stack.umd`` below it.
"""
