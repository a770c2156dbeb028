from __future__ import annotations

from mapper.errors import ConfigError, MapperError, UnknownNameError


def test_location_in_message() -> None:
    err = ConfigError("layers must be a list", path="stackmap.toml", line=4)
    assert isinstance(err, MapperError)
    assert str(err) == "stackmap.toml:4: layers must be a list"
    assert err.to_dict() == {
        "error": "ConfigError",
        "message": "layers must be a list",
        "path": "stackmap.toml",
        "line": 4,
    }


def test_unknown_name_lists_known() -> None:
    err = UnknownNameError("rule", "SM999", ["SM002", "SM001"])
    assert "SM001, SM002" in str(err)
    assert err.details["known"] == ["SM001", "SM002"]
