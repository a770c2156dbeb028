"""An ONNX backend (``onnx.backend.base.Backend``) that runs models on the reference stack.

``prepare`` checks that every op has an importer (so an unsupported op fails there, with the
typed error); the first ``run`` for a given set of input shapes compiles and loads the model
(compile is per shape set: shapes are static). Inputs that carry shapes (Reshape's ``shape``,
ConstantOfShape's input, Dropout's ``ratio``/``training_mode``, Squeeze/Unsqueeze ``axes``) are
bound as constants, their
values part of the cache key. Models share one process-wide Runtime (one UMD, one device).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
from onnx import helper
from onnx.backend.base import Backend, BackendRep

from stack.adapter.onnx_import import import_model
from stack.adapter.registry import importer_for
from stack.compiler import CompiledModel, CompileOptions
from stack.compiler.jit import shared_runtime

#: (op type, input position) pairs whose value decides a shape or a mode at compile time.
#: MaxUnpool's output_shape (2) is not bound: the stack places the indices in the flat order of
#: that shape, as onnxruntime does, while the node test's data scatters into the default shape
#: and pads its end (the onnx reference), so the case stays a typed refusal, not a failure.
SHAPE_INPUTS = {
    ("Reshape", 1),
    ("ConstantOfShape", 0),
    ("Dropout", 1),
    ("Dropout", 2),
    ("Squeeze", 1),
    ("Unsqueeze", 1),
    *(("Slice", i) for i in range(1, 5)),
    *(("Pad", i) for i in range(1, 4)),
    ("CenterCropPad", 1),
    ("Expand", 1),
    ("Tile", 1),
    ("TopK", 1),
    ("CumSum", 1),
    ("CumProd", 1),
    ("DFT", 1),
    ("DFT", 2),
    ("STFT", 1),
    ("STFT", 3),
    ("OneHot", 1),
    ("Trilu", 1),
    *(("Resize", i) for i in range(1, 4)),
    ("Upsample", 1),
    ("Clip", 1),
    ("Clip", 2),
    ("Split", 1),
    ("Col2Im", 1),
    ("Col2Im", 2),
    ("AffineGrid", 1),
    *(("Range", i) for i in range(3)),
    ("NonZero", 0),
    *((op, 1) for op in (
        "ReduceSum", "ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd", "ReduceL1",
        "ReduceL2", "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare",
    )),
}  # fmt: skip


def shape_inputs(model: onnx.ModelProto) -> set[str]:
    """Graph inputs that feed a shape-carrying position."""
    found = set()
    for node in model.graph.node:
        for i, name in enumerate(node.input):
            if (node.op_type, i) in SHAPE_INPUTS:
                found.add(name)
    return found


class StackBackendRep(BackendRep):
    """A prepared model: compiles per input signature, runs through the whole stack."""

    def __init__(self, model: onnx.ModelProto, options: CompileOptions | None = None) -> None:
        self.model = model
        self.options = options or CompileOptions()
        inits = {i.name for i in model.graph.initializer}
        self.input_names = [vi.name for vi in model.graph.input if vi.name not in inits]
        self.bound = shape_inputs(model) & set(self.input_names)
        self._cache: dict[tuple, CompiledModel] = {}

    def _feeds(self, inputs: Any) -> dict[str, np.ndarray]:
        if isinstance(inputs, Mapping):
            return {k: np.asarray(v) for k, v in inputs.items()}
        if isinstance(inputs, np.ndarray):
            inputs = [inputs]
        return {n: np.asarray(v) for n, v in zip(self.input_names, inputs, strict=False)}

    def compiled(self, feeds: Mapping[str, np.ndarray]) -> CompiledModel:
        """The compiled model for these inputs' shapes (and bound values), compiled on demand."""
        key = tuple(
            (n, a.shape, str(a.dtype), a.tobytes() if n in self.bound else b"")
            for n, a in sorted(feeds.items())
        )
        model = self._cache.get(key)
        if model is None:
            graph = import_model(
                self.model,
                input_shapes={n: a.shape for n, a in feeds.items() if n not in self.bound},
                bind={n: a for n, a in feeds.items() if n in self.bound},
            )
            model = CompiledModel(graph, self.options, runtime=shared_runtime())
            self._cache[key] = model
        return model

    def run(self, inputs: Any, **kwargs: Any) -> tuple[np.ndarray, ...]:
        """Run once; outputs in the model's output order."""
        feeds = self._feeds(inputs)
        model = self.compiled(feeds)
        out = model.run({n: a for n, a in feeds.items() if n not in self.bound})
        return tuple(out[name] for name in model.output_names)

    def close(self) -> None:
        """Free the device memory of every compiled variant."""
        for model in self._cache.values():
            model.close()
        self._cache.clear()


class StackBackend(Backend):
    """The reference stack as an ONNX backend (device ``CPU``: the NumPy kernel backend)."""

    @classmethod
    def is_compatible(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> bool:
        return all(_has_importer(n) for n in model.graph.node)

    @classmethod
    def prepare(cls, model: onnx.ModelProto, device: str = "CPU", **kwargs: Any) -> StackBackendRep:
        for i, node in enumerate(model.graph.node):
            importer_for(node.op_type, node.name or f"{node.op_type}_{i}")
        return StackBackendRep(model, kwargs.get("options"))

    @classmethod
    def run_model(
        cls, model: onnx.ModelProto, inputs: Any, device: str = "CPU", **kwargs: Any
    ) -> tuple[np.ndarray, ...]:
        rep = cls.prepare(model, device, **kwargs)
        try:
            return rep.run(inputs)
        finally:
            rep.close()

    @classmethod
    def run_node(
        cls,
        node: onnx.NodeProto,
        inputs: Any,
        device: str = "CPU",
        outputs_info: Sequence[tuple[Any, tuple[int, ...]]] | None = None,
        **kwargs: Any,
    ) -> tuple[np.ndarray, ...]:
        """Run one node: wrap it in a single-node model (opset ``opset_version``, default 17)."""
        arrays = [np.asarray(a) for a in inputs]
        names = [n for n in node.input if n]
        value_infos = [
            helper.make_tensor_value_info(
                n, helper.np_dtype_to_tensor_dtype(a.dtype), list(a.shape)
            )
            for n, a in zip(names, arrays, strict=False)
        ]
        outs = [helper.make_empty_tensor_value_info(n) for n in node.output if n]
        graph = helper.make_graph([node], "run_node", value_infos, outs)
        opset = int(kwargs.get("opset_version", 17))
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        return cls.run_model(model, dict(zip(names, arrays, strict=False)), device)

    @classmethod
    def supports_device(cls, device: str) -> bool:
        return device == "CPU"


def _has_importer(node: onnx.NodeProto) -> bool:
    from stack.adapter.errors import UnsupportedOpError

    try:
        importer_for(node.op_type, node.name)
    except UnsupportedOpError:
        return False
    return True


def run_model(
    model: onnx.ModelProto, inputs: Sequence[np.ndarray] | Mapping[str, np.ndarray]
) -> tuple[np.ndarray, ...]:
    """Convenience: prepare, run once, free."""
    return StackBackend.run_model(model, inputs)
