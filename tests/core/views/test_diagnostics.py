"""What Diagnostics shows: passes, the machine's time, the data directory (§3, §3, §13)."""

from __future__ import annotations

import os
from datetime import timedelta

import pytest

from coven_core.events import EventKind
from coven_core.operations.host import record_zone_change
from coven_core.tz import tzdb
from coven_core.views.diagnostics import diagnostics
from tests.core.conftest import T0, Engine, minutes


def test_passes_newest_first_with_counts_and_lag(engine: Engine) -> None:
    engine.add("backup", "@hourly")
    engine.run_until(T0 + minutes(61))
    found = diagnostics(engine.store, engine.clock.now_utc())
    newest = found.passes[0]
    assert newest.started_at >= found.passes[-1].started_at
    assert newest.role == "leader"
    assert sum(p.settled for p in found.passes) >= 1
    assert any(p.dispatched == 1 for p in found.passes)
    timed = [p for p in found.passes if p.trigger == "deadline"]
    assert timed and all(p.late_ms is not None and p.late_ms >= 0 for p in timed)
    assert all(p.late_ms is None for p in found.passes if p.trigger != "deadline")
    assert found.status.leader is not None and found.status.leader.generation == 1


def test_sleep_clock_jumps_and_zone_changes_are_listed(engine: Engine) -> None:
    engine.add("backup", "@hourly")
    engine.run_until(T0 + minutes(5))
    engine.clock.suspend(timedelta(hours=3))
    engine.run_until(engine.clock.now_utc())
    engine.clock.jump_wall(timedelta(minutes=-30))
    engine.scheduler.pass_once("clock_jumped")
    record_zone_change(engine.store, engine.clock.now_utc(), "Europe/Berlin", "America/New_York")
    kinds = [e.kind for e in diagnostics(engine.store, engine.clock.now_utc()).host_events]
    assert kinds[0] is EventKind.TIMEZONE_CHANGED
    assert {EventKind.SLEPT, EventKind.CLOCK_JUMPED, EventKind.REPLANNED} <= set(kinds)
    slept = next(
        e
        for e in diagnostics(engine.store, engine.clock.now_utc()).host_events
        if e.kind is EventKind.SLEPT
    )
    assert slept.interval is not None
    start, end = slept.interval
    assert end - start == timedelta(hours=3)


def test_the_data_directory_is_private_and_says_where_it_is(engine: Engine) -> None:
    found = diagnostics(engine.store, engine.clock.now_utc()).data_directory
    assert found.directory.path == engine.store.data_dir
    assert (found.directory.mode, found.directory.private, found.directory.owned_by_you) == (
        0o700,
        True,
        True,
    )
    assert engine.store.path in [facts.path for facts in found.files]
    assert all(facts.private for facts in found.files)
    assert found.safe and found.problems == []


@pytest.mark.skipif(os.name != "posix", reason="POSIX permission bits")
def test_a_directory_readable_by_others_is_a_problem_with_its_fix(engine: Engine) -> None:
    os.chmod(engine.store.data_dir, 0o755)
    found = diagnostics(engine.store, engine.clock.now_utc()).data_directory
    assert not found.directory.private and not found.safe
    assert "chmod 700" in found.problems[0]


def test_the_tz_database_in_use(engine: Engine) -> None:
    assert diagnostics(engine.store, engine.clock.now_utc()).tzdb == tzdb.active()
