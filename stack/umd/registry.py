"""Stage 2 of the pipeline: routing an op to its translator.

One translator per op family (linear algebra, convolution and pooling, normalisation,
element-wise, quantisation, data movement). Adding an op means registering a translator that
lists it; the main flow does not change.
"""

from __future__ import annotations

import abc
from typing import ClassVar

from stack.umd.errors import UnknownOpError
from stack.umd.ops import OpKind, OpRequest
from stack.umd.plan import KernelCall, Semantic
from stack.umd.templates import TemplateRegistry


class OpTranslator(abc.ABC):
    """Turns requests of one op family into kernel calls (stage 3) and infers shapes (stage 4).

    Contract: ``parse`` is pure (no device access, no allocation) and raises
    :class:`~stack.umd.errors.InvalidRequestError` subclasses naming the request field;
    ``infer`` returns the output shapes the primary call must have, in its params' order.
    """

    family: ClassVar[str]
    ops: ClassVar[frozenset[OpKind]]

    @abc.abstractmethod
    def parse(self, req: OpRequest, templates: TemplateRegistry) -> Semantic: ...

    @abc.abstractmethod
    def infer(self, call: KernelCall) -> tuple[tuple[int, ...], ...]: ...


class TranslatorRegistry:
    """Op → translator. ``register`` refuses an op that already has one."""

    def __init__(self) -> None:
        self._by_op: dict[OpKind, OpTranslator] = {}

    def register(self, translator: OpTranslator) -> None:
        for op in translator.ops:
            if op in self._by_op:
                raise ValueError(f"{op.name} already routed to {self._by_op[op].family}")
        for op in translator.ops:
            self._by_op[op] = translator

    def route(self, op: OpKind) -> OpTranslator:
        translator = self._by_op.get(op)
        if translator is None:
            known = ", ".join(sorted(k.name for k in self._by_op))
            name = op.name if isinstance(op, OpKind) else repr(op)
            raise UnknownOpError(f"no translator for op {name}; known: {known}", field="op")
        return translator

    def families(self) -> dict[str, tuple[OpKind, ...]]:
        out: dict[str, list[OpKind]] = {}
        for op, t in sorted(self._by_op.items()):
            out.setdefault(t.family, []).append(op)
        return {k: tuple(v) for k, v in out.items()}

    def __contains__(self, op: object) -> bool:
        return op in self._by_op
