"""The pace of a sweep's transactions: sized from how long the last ones took."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from coven_core.scheduling.batching import Pace


def test_it_starts_at_half_the_ceiling_until_a_transaction_is_timed() -> None:
    assert Pace(500).rows == 250
    assert Pace(1).rows == 1


def test_a_ceiling_below_one_row_is_refused() -> None:
    with pytest.raises(ValueError, match="at least one row"):
        Pace(0)


def test_a_slow_transaction_shrinks_the_next_but_does_not_collapse_it() -> None:
    pace = Pace(500, target=0.002)
    pace.note(250, 0.020)  # ten times the target: a stall
    assert 50 < pace.rows < 250


def test_fast_transactions_grow_it_back_to_the_ceiling() -> None:
    pace = Pace(500, target=0.002)
    pace.note(250, 0.020)
    for _ in range(8):
        pace.note(pace.rows, 0.0001)
    assert pace.rows == 500


def test_a_store_whose_rows_cost_the_same_settles_where_a_transaction_meets_the_target() -> None:
    pace = Pace(10_000, target=0.002)
    for _ in range(30):
        pace.note(pace.rows, pace.rows * 0.000_008)  # 8 µs a row: 250 rows make 2 ms
    assert 240 <= pace.rows <= 260


def test_a_transaction_that_touched_nothing_teaches_nothing() -> None:
    pace = Pace(500)
    pace.note(0, 0.5)
    pace.note(10, 0.0)
    assert pace.rows == 250


@given(
    ceiling=st.integers(1, 5_000),
    timings=st.lists(st.tuples(st.integers(0, 5_000), st.floats(0, 10)), max_size=40),
)
def test_it_never_leaves_one_row_to_the_ceiling(
    ceiling: int, timings: list[tuple[int, float]]
) -> None:
    pace = Pace(ceiling)
    for rows, held in timings:
        pace.note(rows, held)
        assert 1 <= pace.rows <= ceiling
