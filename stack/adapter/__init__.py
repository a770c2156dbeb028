"""Framework adapters: ONNX models into the compiler IR.

Imports only ``stack.compiler`` below it.
"""
