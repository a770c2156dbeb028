from __future__ import annotations

from mapper.ingest.code import parse_source
from mapper.ingest.resolve import Resolver
from mapper.model import Language

BASE = b"class Base:\n    def helper(self) -> int:\n        return 1\n"
CHILD = (
    b"from pkg.base import Base as B\n"
    b"class Mid(B):\n    pass\n"
    b"class Child(Mid):\n"
    b"    def helper(self) -> int:\n        return super().helper()\n"
    b"    def go(self) -> int:\n        return self.helper() + self.missing()\n"
)


def _resolve(targets: list[str]) -> dict[str, str | None]:
    base = parse_source("pkg/base.py", BASE, Language.PYTHON)
    child = parse_source("pkg/child.py", CHILD, Language.PYTHON)
    resolver = Resolver([base, child])
    out: dict[str, str | None] = {}
    for ref in child.references:
        if ref.kind == "call" and ref.target in targets:
            found = resolver.call(child, ref)
            out[f"{ref.scope}:{ref.target}"] = found[0].qualname if found else None
    return out


def test_self_super_and_inherited_members() -> None:
    assert _resolve(["super().helper", "self.helper", "self.missing"]) == {
        "pkg.child.Child.helper:super().helper": "pkg.base.Base.helper",  # through Mid
        "pkg.child.Child.go:self.helper": "pkg.child.Child.helper",  # own method first
        "pkg.child.Child.go:self.missing": None,
    }


def test_includes_prefer_the_same_folder() -> None:
    a = parse_source("drv/a/x.h", b"int f(void);\n", Language.C)
    b = parse_source("drv/b/x.h", b"int g(void);\n", Language.C)
    src = parse_source(
        "drv/b/main.c", b'#include "x.h"\nint main(void) { return f(); }\n', Language.C
    )
    resolver = Resolver([a, b, src])
    include = next(r for r in src.references if r.kind == "include")
    assert resolver.import_file(src, include) == "drv/b/x.h"
    call = next(r for r in src.references if r.kind == "call")
    found = resolver.call(src, call)
    assert found is not None and found[0].location.path == "drv/a/x.h"


def test_attribute_calls_on_unknown_objects_use_imported_classes() -> None:
    device = parse_source(
        "kmd/device.py",
        b"class Device:\n    def free(self, va: int) -> None:\n        pass\n",
        Language.PYTHON,
    )
    pool = parse_source(
        "umd/pool.py",
        b"from kmd.device import Device\n"
        b"class Pool:\n"
        b"    def __init__(self, device: Device) -> None:\n        self._device = device\n"
        b"    def free(self, va: int) -> None:\n        self._device.free(va)\n",
        Language.PYTHON,
    )
    resolver = Resolver([device, pool])
    call = next(r for r in pool.references if r.target == "self._device.free")
    found = resolver.call(pool, call)
    # the attribute's type comes from the annotated parameter it is assigned from
    assert found is not None and found[0].qualname == "kmd.device.Device.free"
    assert found[1] == 0.9
    assert ("umd.pool.Pool", "_device", "Device") in pool.attributes
    untyped = parse_source(
        "umd/pool.py",
        b"from kmd.device import Device\n"
        b"class Pool:\n"
        b"    def __init__(self, device) -> None:\n        self._device = device\n"
        b"    def free(self, va: int) -> None:\n        self._device.free(va)\n",
        Language.PYTHON,
    )
    call = next(r for r in untyped.references if r.target == "self._device.free")
    found = Resolver([device, untyped]).call(untyped, call)
    # no type known: Pool.free (the enclosing class) is no candidate, Device is imported
    assert found is not None and found[0].qualname == "kmd.device.Device.free"
    assert found[1] == 0.7


def test_attribute_types_from_annotations_and_constructors() -> None:
    engine = parse_source(
        "kmd/engine.py",
        b"class Engine:\n    def run(self) -> None:\n        pass\n"
        b"class Queue:\n    def run(self) -> None:\n        pass\n",
        Language.PYTHON,
    )
    user = parse_source(
        "umd/user.py",
        b"from kmd import engine\nfrom kmd.engine import Queue\n"
        b"class Base:\n    queue: Queue\n"
        b"class User(Base):\n"
        b"    def __init__(self) -> None:\n        self.engine = engine.Engine()\n"
        b"    def go(self) -> None:\n        self.engine.run()\n        self.queue.run()\n",
        Language.PYTHON,
    )
    resolver = Resolver([engine, user])
    got = {
        r.target: resolver.call(user, r)
        for r in user.references
        if r.kind == "call" and r.target.endswith(".run")
    }
    assert got["self.engine.run"] == (engine.symbols[1], 0.9)  # Engine.run, by constructor
    assert got["self.queue.run"] == (engine.symbols[3], 0.9)  # Queue.run, by base annotation
