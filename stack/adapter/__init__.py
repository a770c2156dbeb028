"""Framework adapters: ONNX models into the compiler IR, and an ONNX backend on the stack.

Imports only ``stack.compiler`` below it.
"""

from stack.adapter.errors import ModelFormatError, UnsupportedOpError, UnsupportedTypeError
from stack.adapter.onnx_import import import_model, load_model
from stack.adapter.registry import supported_ops

__all__ = [
    "ModelFormatError",
    "UnsupportedOpError",
    "UnsupportedTypeError",
    "import_model",
    "load_model",
    "supported_ops",
]
