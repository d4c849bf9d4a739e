"""The timeline query under virtual time (issue #8): a DST zone, a sleep, a coalesced window,
app downtime and future moments, each read back through :func:`coven_core.views.timeline.timeline`."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from coven_core.clock import VirtualClock, WakeReason
from coven_core.errors import ValidationError
from coven_core.model import MisfirePolicy
from coven_core.views.timeline import BAND_APP_NOT_RUNNING, BAND_ASLEEP, Lane, timeline
from tests.core.conftest import T0, Engine, make_engine, minutes


def lane(engine: Engine, start: datetime, end: datetime, name: str, **kw: object) -> Lane:
    found = timeline(engine.store, start, end, engine.clock.now_utc(), **kw)  # type: ignore[arg-type]
    return next(lane for lane in found.lanes if lane.name == name)


def hm(instant: datetime) -> str:
    return instant.strftime("%d %H:%M")


def test_new_york_lane_has_the_gap_skip_the_runs_the_future_and_the_transition(tmp_path) -> None:
    clock = VirtualClock(datetime(2026, 3, 7, 12, tzinfo=UTC))
    engine = make_engine(tmp_path / "d", clock)
    engine.add("nightly", "30 2 * * *", tz="America/New_York")
    engine.run_until(datetime(2026, 3, 10, 12, tzinfo=UTC))
    start, end = datetime(2026, 3, 7, tzinfo=UTC), datetime(2026, 3, 13, tzinfo=UTC)
    found = lane(engine, start, end, "nightly")
    assert [(hm(o.utc), o.disposition, o.reason, o.local_kind) for o in found.recorded] == [
        ("08 07:30", "skipped", "nonexistent_local_time", "nonexistent"),
        ("09 06:30", "succeeded", None, "regular"),
        ("10 06:30", "succeeded", None, "regular"),
    ]
    assert found.recorded[0].local == datetime(2026, 3, 8, 2, 30)
    assert [(hm(p.utc), p.skipped) for p in found.planned] == [
        ("11 06:30", False),
        ("12 06:30", False),
    ]
    [spring] = found.transitions
    assert spring.utc == datetime(2026, 3, 8, 7, tzinfo=UTC) and spring.is_gap
    assert found.zone == "America/New_York" and not found.truncated


def test_planned_moments_mark_a_future_gap_as_skipped(tmp_path) -> None:
    clock = VirtualClock(datetime(2026, 3, 1, 12, tzinfo=UTC))
    engine = make_engine(tmp_path / "d", clock)
    engine.add("nightly", "30 2 * * *", tz="America/New_York")
    engine.run_until(clock.now_utc())
    found = lane(engine, datetime(2026, 3, 7, tzinfo=UTC), datetime(2026, 3, 10, tzinfo=UTC),
                 "nightly")  # fmt: skip
    assert [(p.local.day, p.skipped, p.local_kind) for p in found.planned] == [
        (7, False, "regular"),
        (8, True, "nonexistent"),
        (9, False, "regular"),
    ]
    assert found.recorded == ()


def slept_engine(engine: Engine) -> str:
    """Every 5 minutes from 12:00; asleep from 12:02 to 15:02 (the OS said so)."""
    rid = engine.add("every5", "*/5 * * * *")
    engine.run_until(T0 + minutes(2))
    engine.clock.suspend(timedelta(hours=3), notify=False)
    engine.wake.set(WakeReason.SYSTEM_RESUMED)
    engine.run_until(T0 + timedelta(hours=3, minutes=3))
    return rid


def test_a_sleep_is_one_band_and_one_coalesced_window(engine: Engine) -> None:
    slept_engine(engine)
    found = timeline(engine.store, T0, T0 + timedelta(hours=4), engine.clock.now_utc())
    [every5] = found.lanes
    [window] = every5.windows
    assert (hm(window.first), hm(window.last), window.count) == ("01 12:05", "01 14:55", 35)
    assert (window.reason, window.cause) == ("missed", "asleep")
    assert [(hm(o.utc), o.disposition) for o in every5.recorded] == [
        ("01 12:00", "succeeded"),
        ("01 15:00", "succeeded"),
    ]
    [band] = found.bands
    assert (band.kind, hm(band.start), hm(band.end)) == (BAND_ASLEEP, "01 12:02", "01 15:02")
    assert found.now == engine.clock.now_utc()
    assert every5.planned[0].utc == T0 + timedelta(hours=3, minutes=5)
    assert all(p.utc > found.now for p in every5.planned) and every5.transitions == ()


def test_a_range_inside_the_sleep_still_sees_the_window_and_the_band(engine: Engine) -> None:
    slept_engine(engine)
    start = T0 + timedelta(hours=1)
    found = timeline(engine.store, start, start + timedelta(hours=1), engine.clock.now_utc())
    [every5] = found.lanes
    assert [w.count for w in every5.windows] == [35]  # keyed at 12:05, before the range
    assert every5.recorded == () and every5.planned == ()
    assert [b.kind for b in found.bands] == [BAND_ASLEEP]  # stamped at 15:02, after it


def test_app_downtime_is_a_band_from_the_last_pass_to_the_next_start(tmp_path, clock) -> None:
    first = make_engine(tmp_path / "d", clock)
    first.add("hourly", "@hourly", misfire=MisfirePolicy.SKIP_MISSED)
    first.run_until(T0 + minutes(5))
    first.scheduler.shutdown()
    first.store.close()
    clock.advance(timedelta(hours=5))
    second = make_engine(tmp_path / "d", clock)
    second.run_until(clock.now_utc() + minutes(1))
    found = timeline(second.store, T0, T0 + timedelta(hours=8), clock.now_utc())
    [band] = found.bands
    assert band.kind == BAND_APP_NOT_RUNNING
    assert band.start <= T0 + minutes(5) and band.end == T0 + timedelta(hours=5, minutes=5)
    [window] = found.lanes[0].windows
    assert (window.count, window.cause) == (5, "app_not_running")
    second.store.close()


def test_a_paused_routine_plans_nothing_and_its_window_says_paused(engine: Engine) -> None:
    engine.add("every5", "*/5 * * * *")
    engine.run_until(T0 + minutes(1))
    engine.operator.pause("every5", reason="holiday")
    engine.run_until(T0 + minutes(31))
    engine.operator.resume("every5")
    engine.run_until(T0 + minutes(32))
    found = lane(engine, T0, T0 + timedelta(hours=1), "every5")
    assert [(w.reason, w.count) for w in found.windows] == [("paused", 6)]
    engine.operator.pause("every5")
    assert lane(engine, T0, T0 + timedelta(hours=1), "every5").planned == ()


def test_a_trial_routine_s_lane_says_it_is_a_trial_until_it_is_made_live(engine: Engine) -> None:
    engine.add("sync", "*/5 * * * *", shadow=True)
    engine.add("backup", "*/5 * * * *")
    engine.run_until(T0 + minutes(11))
    found = lane(engine, T0, T0 + timedelta(hours=1), "sync")
    assert found.trial and {r.disposition for r in found.recorded} == {"shadowed"}
    assert not lane(engine, T0, T0 + timedelta(hours=1), "backup").trial
    engine.operator.edit_routine("sync", lambda spec: replace(spec, shadow=False))
    assert not lane(engine, T0, T0 + timedelta(hours=1), "sync").trial


def test_a_lane_is_bounded_by_its_limit_and_says_it_was_cut(engine: Engine) -> None:
    engine.add("minutely", "* * * * *")
    engine.run_until(T0 + minutes(30))
    found = lane(engine, T0, T0 + timedelta(hours=1), "minutely", limit=10)
    assert len(found.recorded) == 10 and len(found.planned) == 10 and found.truncated


@pytest.mark.parametrize(
    ("start", "end", "message"),
    [
        (T0, T0, "before it starts"),
        (T0, T0 + timedelta(days=401), "at most 400 days"),
        (T0.replace(tzinfo=None), T0 + minutes(1), "aware instants"),
    ],
)
def test_bad_ranges_are_refused_with_the_reason(engine: Engine, start, end, message) -> None:
    with pytest.raises(ValidationError, match=message):
        timeline(engine.store, start, end, T0)


def test_every_read_is_indexed(engine: Engine) -> None:
    conn = engine.store.conn
    plans = [
        " ".join(str(row[-1]) for row in conn.execute(f"EXPLAIN QUERY PLAN {sql}", args))
        for sql, args in (
            ("SELECT kind, data FROM events WHERE kind IN ('slept', 'downtime') AND at >= ? "
             "AND at < ? ORDER BY at LIMIT 5", ("a", "b")),
            ("SELECT kind, data FROM events WHERE kind IN ('slept', 'downtime') AND kind = ? "
             "AND at >= ? ORDER BY at LIMIT 1", ("slept", "b")),
            ("SELECT id FROM occurrences WHERE routine_id = ? AND scheduled_utc >= ? "
             "AND scheduled_utc < ? ORDER BY scheduled_utc, id LIMIT 5", ("r", "a", "b")),
        )
    ]  # fmt: skip
    assert "events_intervals" in plans[0] and "events_intervals" in plans[1]
    assert "occurrences_history" in plans[2]


def test_a_run_whose_end_no_one_saw_has_no_bar_past_its_start(tmp_path, clock) -> None:  # type: ignore[no-untyped-def]
    """Recovery closed its attempt as ambiguous ten minutes on: that is when someone looked,
    not how long it ran, so its bar does not reach there (as its duration says nothing)."""
    first = make_engine(tmp_path / "d", clock)
    first.add("backup", "1 12 * * *")
    first.runtime.auto_exit = None
    first.run_until(T0 + minutes(2))
    (started,) = first.store.conn.execute("SELECT started_at FROM attempts").fetchone()
    first.store.close()  # the app died with the command running
    clock.advance(timedelta(minutes=10))
    second = make_engine(tmp_path / "d", clock)
    second.run_until(clock.now_utc() + minutes(1))
    (run,) = lane(second, T0, T0 + timedelta(hours=1), "backup").recorded
    assert run.disposition == "recovery_required"
    assert run.ran_from is not None and run.ran_from.isoformat().startswith(started[:19])
    assert run.ran_until == run.ran_from  # a mark where it began, no bar to the recovery
