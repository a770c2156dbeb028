"""The check reads what ingest parsed: on a current map no file is parsed again.

After one check (which refreshes the map), the tree-sitter parse, the code, contract and doc
parsers and the reading of the repository's source files as text are made to fail; a second
check must still give the same findings, so none of them ran (the proto rules used to read
the servicer files again and parse them with ``ast``). The drift used makes SM502 fire twice
(a request read and a message keyword the proto lacks): the proto rule's facts come from the
stored parse.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from mapper.check import run_check
from mapper.ingest import code, contracts, docs, parse, treesitter


def _tripwire(what: str):  # type: ignore[no-untyped-def]
    def parsed_again(*_args: object, **_kw: object) -> None:
        raise AssertionError(f"{what} ran during a check on a current map")

    return parsed_again


def _unread(read, repo: Path):  # type: ignore[no-untyped-def]
    def guarded(self: Path, *args: object, **kw: object) -> object:
        if self.suffix in _SOURCES and repo in self.parents:
            raise AssertionError(f"{self} was read during a check on a current map")
        return read(self, *args, **kw)

    return guarded


_SOURCES = (".py", ".proto", ".h", ".c", ".yaml", ".md")


def test_a_check_on_a_current_map_parses_nothing(
    clean_repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    service = clean_repo / "fx/umd/service.py"
    text = service.read_text(encoding="utf-8")
    text = text.replace("op = request.op", "op = request.op + request.priority", 1)
    service.write_text(text.replace("cache_hit=False)", "cache_hit=False, cached=True)", 1))
    first = run_check(clean_repo, history=False)  # refreshes the map: parses the edited file
    with monkeypatch.context() as patched:  # undone before pytest reports
        for module, name in [
            (treesitter, "parse"),
            (code, "parse_file"),
            (parse, "parse_one"),
            (contracts, "load_contracts"),
            (docs, "parse_markdown"),
        ]:
            patched.setattr(module, name, _tripwire(f"{module.__name__}.{name}"))
        # the text of a source file is what a parser reads (hashing for staleness reads bytes)
        patched.setattr(Path, "read_text", _unread(Path.read_text, clean_repo))
        try:
            second = run_check(clean_repo, history=False)
        except AssertionError as exc:
            pytest.fail(str(exc))
    found = [(f.rule, str(f.code)) for f in second.findings]
    assert found == [("SM502", "fx/umd/service.py:8"), ("SM502", "fx/umd/service.py:9")]
    assert [f.fingerprint for f in second.findings] == [f.fingerprint for f in first.findings]
