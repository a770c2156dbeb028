"""The map's JSON text is the standard encoder's (compact, characters beyond ASCII as
themselves), including for the values orjson refuses."""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest

from mapper import jsontext


@dataclasses.dataclass(frozen=True)
class _Place:
    path: str
    line: int


def _standard(value: Any, **kw: Any) -> str:
    return json.dumps(value, separators=(",", ":"), **kw)


@pytest.mark.parametrize(
    "value",
    [
        [["symbol:a.b", "symbol", "b", "adapter", "a.py", 3, {"doc": "naïve → ok", "tags": []}]],
        {"record": {"@t": [1, 2.5, None, True, "x"]}},
        {1: "int key", None: "none key", 2.5: "float key"},
        [2**63 - 1, -(2**63)],
    ],
)
def test_text_reads_back_as_the_standard_encoders(value: Any) -> None:
    assert jsontext.dumps(value) == _standard(value, ensure_ascii=False)


def test_what_orjson_refuses_is_written_by_the_standard_encoder() -> None:
    big, lone = [2**70, 5], ["a\udc80b"]
    assert jsontext.dumps(big) == _standard(big) == "[1180591620717411303424,5]"
    assert jsontext.dumps(lone) == _standard(lone) == '["a\\udc80b"]'


def test_an_object_is_a_type_error_unless_lenient() -> None:
    with pytest.raises(TypeError, match="_Place is not JSON serializable"):
        jsontext.dumps({"at": _Place("a.py", 1)})
    with pytest.raises(TypeError):
        jsontext.dumps({"at": object(), "big": 2**70})  # through the fallback too
    place = _Place("a.py", 1)
    assert jsontext.dumps_lenient({"at": place}) == _standard({"at": place}, default=str)
    assert json.loads(jsontext.dumps_lenient([place, 2**70])) == [str(place), 2**70]
