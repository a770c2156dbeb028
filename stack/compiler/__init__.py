"""The compiler: IR, verifier, passes, memory planner, Executable emission.

Imports only ``stack.runtime`` (the Executable format) below it.
"""
