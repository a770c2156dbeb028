"""The tuning database: the best launch parameters per (kernel, shape class, device).

``refstack tune`` measures a kernel's tunable launch parameters (its descriptor's ``tunable``
list) and keeps the best per key here; the UMD consults it when it computes a launch
configuration (stage 4), and falls back to its own default where there is no record.

The file is JSON (``{"schema": "refstack.tuning-db/1", "version": "1.0.0", "records": [...]}``),
at ``$REFSTACK_TUNING_DB`` or ``~/.cache/refstack/tuning.json``; it is written whole to a
temporary file and renamed over the old one, so a reader never sees half a database. A file of
another major version is refused, another minor one read with a warning.

A *shape class* groups shapes that tune alike: the dtype and every input dimension rounded up
to a power of two (``f32:512x512,512x256``). A *device* key names the backend and what the
launch is cut for (``numpy:threads=2``; on a GPU its model and compute capability,
``cupy:NVIDIA H200:sm90``). Parameters: ``tiles`` on the CPU, ``block`` on a GPU.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from stack.errors import UmdError
from stack.umd.operators import (
    DescriptorError,
    DeviceCapabilities,
    SemVer,
    VersionMismatchError,
    check_version,
)
from stack.umd.plan import KernelCall

log = logging.getLogger("stack.umd.tuning")
ENV = "REFSTACK_TUNING_DB"
SCHEMA = "refstack.tuning-db/1"
VERSION = SemVer(1, 0, 0)


class TuningDatabaseError(UmdError):
    """A tuning database file that cannot be read (malformed, or another major version)."""

    grpc_code = "FAILED_PRECONDITION"

    def __init__(self, message: str, *, path: str) -> None:
        super().__init__(message, path=path)


@dataclass(frozen=True, slots=True)
class TuningRecord:
    """The best parameters measured for one key, with the default's figures beside them."""

    kernel: str
    shape_class: str
    device: str
    params: Mapping[str, int]
    p95_s: float
    default_params: Mapping[str, int] = field(default_factory=dict)
    default_p95_s: float = 0.0
    samples: int = 0

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.kernel, self.shape_class, self.device)


def default_path() -> Path:
    """``$REFSTACK_TUNING_DB``, else ``~/.cache/refstack/tuning.json``."""
    env = os.environ.get(ENV)
    return Path(env) if env else Path.home() / ".cache" / "refstack" / "tuning.json"


def _pow2(n: int) -> int:
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def shape_class(call: KernelCall) -> str:
    """The shape class of a kernel call (see the module docstring)."""
    dims = ",".join("x".join(str(_pow2(d)) for d in op.shape) or "1" for op in call.ins)
    return f"{call.ins[0].dtype.name.lower() if call.ins else 'none'}:{dims}"


def device_key(target: str, threads: int, caps: DeviceCapabilities | None = None) -> str:
    """The device part of a key: the backend and its compute threads on the CPU; on a GPU
    (``caps`` of a non-CPU device) the backend, the GPU model and its compute capability."""
    if caps is None or caps.cpu:
        return f"{target}:threads={threads}"
    model = caps.device.split(":", 2)[-1]
    major, minor = caps.compute_capability or (0, 0)
    return f"{target}:{model}:sm{major}{minor}"


class TuningDatabase:
    """Records by key, loaded from and saved to one JSON file. Not thread-safe for writers
    (one tuner at a time); readers share a loaded instance."""

    def __init__(self, path: Path | None = None) -> None:
        """Load ``path`` (default :func:`default_path`); a missing file is an empty database.
        TuningDatabaseError for a malformed file or another major version."""
        self.path = path if path is not None else default_path()
        self._records: dict[tuple[str, str, str], TuningRecord] = {}
        if self.path.exists():
            self._load()

    def _load(self) -> None:
        where = str(self.path)
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
            if not isinstance(data, dict) or data.get("schema") != SCHEMA:
                raise TuningDatabaseError(f"not a tuning database ({SCHEMA})", path=where)
            check_version("tuning database", where, SemVer.parse(data["version"]), VERSION)
            for raw in data["records"]:
                rec = TuningRecord(**raw)
                self._records[rec.key] = rec
        except (OSError, ValueError, KeyError, TypeError, DescriptorError) as exc:
            raise TuningDatabaseError(f"unreadable tuning database: {exc}", path=where) from None
        except VersionMismatchError as exc:
            raise TuningDatabaseError(exc.message, path=where) from None

    def lookup(self, kernel: str, shape: str, device: str) -> TuningRecord | None:
        """The record of a key, or None."""
        return self._records.get((kernel, shape, device))

    def params_for(self, call: KernelCall, device: str) -> Mapping[str, int]:
        """The tuned parameters of ``call`` on ``device`` ({} when never tuned)."""
        rec = self._records.get((call.kernel_id.name, shape_class(call), device))
        return rec.params if rec is not None else {}

    def put(self, record: TuningRecord) -> None:
        """Keep ``record`` (replacing the one of its key) in memory; :meth:`save` writes."""
        self._records[record.key] = record

    def records(self) -> tuple[TuningRecord, ...]:
        return tuple(self._records[k] for k in sorted(self._records))

    def to_dict(self) -> dict[str, Any]:
        return {
            "schema": SCHEMA,
            "version": str(VERSION),
            "records": [
                asdict(r) | {"params": dict(r.params), "default_params": dict(r.default_params)}
                for r in self.records()
            ],
        }

    def save(self) -> None:
        """Write the whole database atomically (temporary file, then rename)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(self.to_dict(), indent=2, sort_keys=True) + "\n", "utf-8")
        os.replace(tmp, self.path)


def open_default() -> TuningDatabase | None:
    """The database at :func:`default_path` for a UMD to consult; None (launches keep their
    defaults) when it cannot be read, with the reason logged as a WARNING."""
    try:
        return TuningDatabase()
    except TuningDatabaseError as exc:
        log.warning("tuning database ignored: %s (%s)", exc.message, exc.path)
        return None
