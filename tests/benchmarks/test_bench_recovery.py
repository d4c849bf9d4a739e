"""benchmarks/bench_recovery.py, run small: a month's recovery against an ordinary start."""

from __future__ import annotations

from benchmarks import bench_recovery
from tests.benchmarks.conftest import judged_rows


def test_a_month_off_is_measured_against_an_ordinary_start_of_the_same_store() -> None:
    rows = judged_rows("bench_recovery", bench_recovery.measure(routines=40, rounds=1))
    first, settled = rows
    assert first.kind == settled.kind == "cost" and first.target == bench_recovery.TARGET
    assert first.ours < settled.ours and first.baseline < settled.baseline
