"""mapper.collector.paused: the cyclic collector off inside, back as it was after."""

from __future__ import annotations

import gc

import pytest

from mapper import collector


def test_paused_restores_the_collector() -> None:
    assert gc.isenabled()
    with collector.paused():
        assert not gc.isenabled()
        with collector.paused():  # re-entrant: the inner exit leaves it off
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(KeyError), collector.paused():
        raise KeyError("x")
    assert gc.isenabled()


def test_paused_leaves_a_disabled_collector_disabled() -> None:
    gc.disable()
    try:
        with collector.paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
