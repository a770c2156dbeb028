from __future__ import annotations

import threading
import time

from stack.umd.ids import SEQ_BITS, SessionIdGenerator, format_session_id, parse_session_id


def test_ids_unique_and_increasing_across_threads() -> None:
    gen = SessionIdGenerator()
    got: list[int] = []
    lock = threading.Lock()

    def take() -> None:
        mine = [gen.next() for _ in range(2000)]
        assert mine == sorted(mine)
        with lock:
            got.extend(mine)

    threads = [threading.Thread(target=take) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(got)) == 8000


def test_a_restarted_generator_never_repeats_an_id() -> None:
    first = SessionIdGenerator()
    old = [first.next() for _ in range(100)]
    time.sleep(0.002)
    second = SessionIdGenerator()  # a "restarted" service: counter starts again at 1
    new = [second.next() for _ in range(100)]
    assert not set(old) & set(new)
    assert min(new) > max(old)
    # a naive counter would have repeated: both sequences start at 1
    assert old[0] & ((1 << SEQ_BITS) - 1) == new[0] & ((1 << SEQ_BITS) - 1) == 1


def test_sequence_overflow_moves_the_base_forward() -> None:
    gen = SessionIdGenerator(start_ms=1000)
    gen._seq = (1 << SEQ_BITS) - 2  # near the end of the sequence space
    a, b, c = gen.next(), gen.next(), gen.next()
    assert a < b < c
    assert c >> SEQ_BITS > 1000


def test_string_form_round_trips() -> None:
    v = SessionIdGenerator().next()
    assert parse_session_id(format_session_id(v)) == v
    assert len(format_session_id(v)) == 16
