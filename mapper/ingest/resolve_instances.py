"""What class an instance is, where the code states it: the types the Python resolver gives
locals, factories and pytest fixtures (a mixin of :class:`~mapper.ingest.resolve_python.
PythonNames`).

- ``x = Cls(…)``, ``x: Cls = …`` and ``x = make(…)`` bind ``x`` to a ``Cls`` in its function
  (or module), where ``make``'s return annotation names ``Cls`` or it returns ``Cls(…)``;
- an unannotated parameter of a function in a pytest module is the value of the fixture of
  its name (in the module or a ``conftest`` of its packages): what that fixture returns.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from mapper.ingest._python_defs import annotation_class
from mapper.ingest.code import ParsedFile
from mapper.model import Symbol, SymbolKind


class InstanceTypes:
    """The instance typing of :class:`~mapper.ingest.resolve_python.PythonNames`."""

    py: dict[str, Symbol]
    attr_types: dict[tuple[str, str], str]
    _returned: dict[str, list[str]]
    _files: dict[str, ParsedFile]
    _fixtures: dict[tuple[str, str], str | None]  # memo of _fixture_class by (path, name)

    if TYPE_CHECKING:

        def python_name(self, pf: ParsedFile, name: str) -> Symbol | None: ...

    def instance_class(self, pf: ParsedFile, written: str) -> str | None:
        """The class of the instance ``written`` denotes in ``pf``: a class, or a function
        whose return annotation names a class or that returns one constructed (a factory)."""
        sym = self.python_name(pf, written)
        if sym is not None and sym.kind in (SymbolKind.FUNCTION, SymbolKind.METHOD):
            return self.returned_class(sym)
        return sym.qualname if sym is not None and sym.kind is SymbolKind.CLASS else None

    def returned_class(self, fn: Symbol) -> str | None:
        """The class ``fn``'s return annotation names, else the one it returns constructed."""
        home = self._files.get(fn.location.path)
        returns = annotation_class(fn.signature.returns or "") if fn.signature else None
        for written in (returns, *self._returned.get(fn.qualname, ())):
            sym = self.python_name(home, written) if written and home is not None else None
            if sym is not None and sym.kind is SymbolKind.CLASS:
                return sym.qualname
        return None

    def _fixture_class(self, pf: ParsedFile, name: str) -> str | None:
        """In a pytest module (``test_*.py``, ``*_test.py``, ``conftest.py``), what an
        unannotated parameter receives: the fixture of its name in the module or a
        ``conftest`` of its packages, by the class that fixture returns (memoised: a fixture
        is a parameter of many tests)."""
        key = (pf.path, name)
        if key not in self._fixtures:
            self._fixtures[key] = self._find_fixture_class(pf, name)
        return self._fixtures[key]

    def _find_fixture_class(self, pf: ParsedFile, name: str) -> str | None:
        base = pf.path.rpartition("/")[2]
        module = pf.module or ""
        if not (base.startswith("test_") or base.endswith("_test.py") or base == "conftest.py"):
            return None
        parts = module.split(".")
        homes = [module] + [
            ".".join([*parts[:cut], "conftest"]) for cut in range(len(parts) - 1, -1, -1)
        ]
        for home in homes:
            fixture = self.py.get(f"{home}.{name}")
            if fixture is not None and fixture.kind is SymbolKind.FUNCTION:
                return self.returned_class(fixture)
        return None

    def _local_class(self, scope: str, name: str) -> str | None:
        """The class of a name bound in the function ``scope``, a function it is nested in,
        or their module (``x = Cls(…)``, ``x = make(…)``, ``x: Cls = …``)."""
        parts = scope.split(".")
        for cut in range(len(parts), 0, -1):
            owner = ".".join(parts[:cut])
            sym = self.py.get(owner)
            if sym is not None and sym.kind is SymbolKind.CLASS:
                continue  # a class's attributes are no bare names in its methods
            typ = self.attr_types.get((owner, name))
            if typ is not None:
                return typ
        return None
