"""The start lag ``coven status`` and Diagnostics report (§11), under virtual time."""

from __future__ import annotations

from datetime import timedelta

from coven_core.clock import VirtualClock
from coven_core.model import MissedCause
from coven_core.views.status import NOT_THE_SCHEDULERS, Lags, lags
from tests.core.conftest import T0, Engine, make_engine, minutes


def late_starts(engine: Engine) -> list[tuple[str, str | None]]:
    """Each start more than an hour after its moment, with the cause stored for it."""
    return list(engine.store.conn.execute(
        "SELECT o.id, o.cause FROM occurrences o JOIN attempts a ON a.occurrence_id = o.id "
        "WHERE julianday(a.started_at) - julianday(o.scheduled_utc) > 1.0 / 24"
    ))  # fmt: skip


def measured(engine: Engine) -> Lags:
    with engine.store.read() as conn:
        return lags(conn, engine.clock.now_utc())


def test_a_moment_caught_up_after_the_app_was_off_is_not_the_schedulers_lag(
    tmp_path, clock: VirtualClock
) -> None:  # type: ignore[no-untyped-def]
    """Caught up hours late, once the app ran again: its story says why, and it is not how
    quickly the scheduler starts what comes due. Counted from when it was planned, it reads
    as the quick start it was (counted from its moment, the p99 read 2 h 42 min)."""
    first = make_engine(tmp_path / "d", clock)
    first.add("every5", "*/5 * * * *")
    first.add("daily", "30 12 * * *")
    first.run_until(T0 + minutes(12))  # 12:05 and 12:10 start on time
    first.store.close()  # the app quits; 12:30 passes with nothing running
    clock.advance(timedelta(hours=3))
    again = make_engine(tmp_path / "d", clock)
    again.run_until(clock.now_utc() + minutes(6))  # 12:30 caught up; every5 on time after
    ((_, cause),) = late_starts(again)
    assert cause == "app_not_running"
    found = measured(again)
    assert found.start_lag_samples >= 3
    assert found.start_lag_p99 is not None and found.start_lag_p99 < 60


def test_a_moment_the_scheduler_itself_was_late_for_counts_from_its_instant(
    engine: Engine,
) -> None:
    """The app ran all along and the moment was still reached hours late (a stalled disk,
    an overload): that is the scheduler's lag, and the p99 says it."""
    engine.add("daily", "30 12 * * *")
    engine.run_until(T0 + minutes(12))
    engine.clock.advance(timedelta(hours=3))  # the same process: no sleep, no restart
    engine.run_until(engine.clock.now_utc() + minutes(1))
    ((_, cause),) = late_starts(engine)
    assert cause == "scheduler_late"
    found = measured(engine)
    assert found.start_lag_p99 is not None and found.start_lag_p99 > 2 * 3600


def test_the_causes_not_the_schedulers_are_the_models() -> None:
    named = {MissedCause.ASLEEP, MissedCause.APP_NOT_RUNNING, MissedCause.CLOCK_JUMP}
    assert set(NOT_THE_SCHEDULERS) == {cause.value for cause in named}


def test_a_moment_that_came_just_before_the_app_started_is_not_the_schedulers_lag(
    tmp_path, clock: VirtualClock
) -> None:  # type: ignore[no-untyped-def]
    """12:15 came while the app was off, 40 s before it started again: not missed (under a
    minute late), it runs at the start, its lag counted from when the app was back. Counted
    from its moment, an app just opened showed a p99 of 40 s (50 s, seen on the Diagnostics
    page)."""
    first = make_engine(tmp_path / "d", clock)
    first.add("every5", "*/5 * * * *")
    first.run_until(T0 + minutes(12))  # 12:00, 12:05 and 12:10 start on time
    first.scheduler.shutdown()  # the app quits, letting go of its lease
    first.store.close()
    clock.advance(timedelta(minutes=3, seconds=40))  # back at 12:15:40
    again = make_engine(tmp_path / "d", clock)
    again.run_until(clock.now_utc() + minutes(1))
    started = again.store.conn.execute(
        "SELECT a.started_at FROM attempts a JOIN occurrences o ON o.id = a.occurrence_id "
        "WHERE o.scheduled_utc LIKE '2026-03-01T12:15%'"
    ).fetchall()
    assert started == [("2026-03-01T12:15:40.000000Z",)]  # it ran, at the start
    found = measured(again)
    assert found.start_lag_samples == 4
    assert found.start_lag_p99 is not None and found.start_lag_p99 < 1
