"""The translation pipeline: six explicit stages from an :class:`OpRequest` to instruction blobs.

1. validate  — :mod:`stack.umd.validate` (structure on a miss; addresses always)
2. route     — :class:`~stack.umd.registry.TranslatorRegistry` (one translator per op family)
3. semantic  — the translator's ``parse``: attributes, dtypes, layout conversions
4. shapes    — the translator's ``infer`` checked against the outputs; templates' launch configs
5. instantiate — :meth:`~stack.umd.templates.KernelTemplate.instantiate` encodes each call
6. submit    — :meth:`stack.umd.session.UmdSession.submit` (command buffer → KMD queue → fence)

Stages 2–5 run on a cache miss only; a hit patches the cached :class:`~stack.umd.program.Program`.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import NamedTuple

from stack.kmd.errors import BlobFormatError
from stack.kmd.kernels.ids import KernelId
from stack.umd.cache import CacheView
from stack.umd.errors import AddressError, InvalidRequestError, ShapeError
from stack.umd.operators import DeviceCapabilities
from stack.umd.ops import OpRequest
from stack.umd.plan import KernelCall
from stack.umd.pool import MemoryPool
from stack.umd.program import BlobTemplate, Program
from stack.umd.registry import TranslatorRegistry
from stack.umd.templates import TemplateRegistry, default_templates
from stack.umd.translators import default_translators
from stack.umd.tuning import TuningDatabase, device_key
from stack.umd.validate import check_addresses, check_structure


class Translated(NamedTuple):
    """The instruction blobs of one op, ready to submit (immutable).

    A named tuple rather than a frozen dataclass: one is made per op on the hot path, and a
    tuple is built several times faster.

    ``blobs`` run in order (layout conversions around the op's own kernel, whose blob is
    ``blob``). ``scratch`` lists session allocations the conversions use: they belong to this
    translation and are freed once the ticket of the submit that ran it completes (a
    ``Translated`` with scratch is therefore submitted once).
    """

    blobs: tuple[bytes, ...]
    kernel_id: KernelId
    cache_hit: bool
    primary: int = 0
    scratch: tuple[int, ...] = ()

    @property
    def blob(self) -> bytes:
        return self.blobs[self.primary]


def cache_key(req: OpRequest, target: str) -> Hashable:
    """What determines the blobs apart from the addresses: op, operand signatures, attrs, target."""
    return (
        req.op,
        tuple([(d.shape, d.dtype, d.layout) for d in req.inputs]),
        tuple([(d.shape, d.dtype, d.layout) for d in req.outputs]),
        req.attrs,
        target,
    )


class Pipeline:
    """Stages 1–5 over shared, read-only registries; thread-safe (no mutable state of its own)."""

    def __init__(
        self,
        translators: TranslatorRegistry | None = None,
        templates: TemplateRegistry | None = None,
        target: str = "numpy",
        threads: int = 1,
        tuning: TuningDatabase | None = None,
        capabilities: DeviceCapabilities | None = None,
    ) -> None:
        """``target``: the device backend blobs are made for; ``threads``: its compute threads
        (CPU launches are cut into tiles for them); ``tuning``: tuned launch parameters the
        launches take where the database has a record for their (kernel, shape class, device);
        ``capabilities``: the device's (a GPU's records are kept per GPU model)."""
        self.translators = translators or default_translators()
        self.templates = templates or default_templates()
        self.target = target
        self.threads = threads
        self.tuning = tuning
        self._device_key = device_key(target, threads, capabilities)

    def tuned(self, call: KernelCall) -> Mapping[str, int]:
        """The launch parameters the tuning database keeps for ``call`` here ({}: not tuned;
        ``tiles`` on the CPU, ``block`` on a GPU)."""
        if self.tuning is None:
            return {}
        return self.tuning.params_for(call, self._device_key)

    def compile(self, req: OpRequest) -> Program:
        """Stages 1 (structure), 2, 3, 4 and 5 for a request; no session, no device access."""
        check_structure(req)
        translator = self.translators.route(req.op)
        sem = translator.parse(req, self.templates)
        main = sem.main
        expected = translator.infer(main)
        if len(expected) != len(main.outs):
            raise ShapeError(f"{req.op.name} produces {len(expected)} outputs", field="outputs")
        for field, want, got in zip(sem.out_fields, expected, main.outs, strict=True):
            if want != got.shape:
                raise ShapeError(
                    f"{req.op.name} output shape is {want}, request says {got.shape}", field=field
                )
        try:
            blobs = tuple(self._instantiate(c) for c in sem.calls)
        except BlobFormatError as exc:  # e.g. a grid beyond 3 x u32: a request the device refuses
            raise InvalidRequestError(
                f"{req.op.name} cannot be launched: {exc.message}", field="inputs"
            ) from None
        nbytes = tuple(d.byte_size for d in (*req.inputs, *req.outputs))
        return Program(blobs, sem.scratch, sem.primary, nbytes)

    def _instantiate(self, call: KernelCall) -> BlobTemplate:
        tuned = self.tuned(call)
        return self.templates.get(call.kernel_id).instantiate(
            call, self.target, self.threads, tuned.get("tiles"), tuned.get("block")
        )

    def infer_shapes(self, req: OpRequest) -> tuple[tuple[int, ...], ...]:
        """The shapes the op's outputs must have, from its inputs and attributes (stages 1–4,
        pure: no session, no device). The outputs' shapes in ``req`` are ignored; their count,
        dtypes and layouts count. Errors: InvalidRequestError subclasses naming the field."""
        check_structure(req)
        translator = self.translators.route(req.op)
        sem = translator.parse(req, self.templates)
        return tuple(translator.infer(sem.main))

    def translate(
        self,
        req: OpRequest,
        pool: MemoryPool,
        view: CacheView[Program],
        alloc_scratch: Callable[[int], int],
    ) -> Translated:
        """Translate one request for a session (its memory pool, cache view and allocator)."""
        ins, outs = req.inputs, req.outputs
        try:
            key = (
                req.op,
                tuple([(d.shape, d.dtype, d.layout) for d in ins]),
                tuple([(d.shape, d.dtype, d.layout) for d in outs]),
                req.attrs,
                self.target,
            )  # cache_key(), inlined on the hot path
            program = view.get(key)
        except (TypeError, AttributeError):
            check_structure(req)  # raises the precise error for an unhashable/odd request
            raise InvalidRequestError("request is not hashable", field="attrs") from None
        hit = program is not None
        if program is None:  # validate fully (addresses too) before any computation
            check_structure(req)
            check_addresses(req, pool.contains)
            program = self.compile(req)
            view.put(key, program)
        addrs = tuple([d.addr for d in ins] + [d.addr for d in outs])
        if len(addrs) != len(program.nbytes) or pool.first_outside(addrs, program.nbytes) >= 0:
            check_addresses(req, pool.contains)  # raises, naming the field
            raise AddressError("an operand lies outside the session's allocations", field="inputs")
        scratch: tuple[int, ...] = ()
        if program.scratch:
            scratch = tuple(alloc_scratch(n) for n in program.scratch)
            addrs += scratch
        return Translated(program.patch(addrs), program.kernel_id, hit, program.primary, scratch)
