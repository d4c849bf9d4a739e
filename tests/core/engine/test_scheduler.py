"""The scheduling loop under virtual time (issue #3): misfire, jumps, overlap, pause, edits."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest

from coven_core import events
from coven_core.clock import SAFETY_CAP, VirtualClock, WakeReason
from coven_core.events import EventKind
from coven_core.model import MisfirePolicy, OverlapPolicy
from tests.core.conftest import T0, Engine, make_engine, minutes


def stamps(engine: Engine, rid: str) -> list[tuple]:
    """(HH:MM, disposition or state, reason, count, cause) per occurrence, oldest first."""
    return [
        (row[0][11:16], row[3] or row[2], row[4], row[5], row[6]) for row in engine.history(rid)
    ]


def event_kinds(engine: Engine) -> list[str]:
    return [e.kind.value for e in events.since(engine.store.conn, 0, 10_000)]


def test_on_time_runs_succeed(engine: Engine) -> None:
    rid = engine.add("every5", "*/5 * * * *")
    engine.run_until(T0 + minutes(12))
    assert stamps(engine, rid) == [
        ("12:00", "succeeded", None, None, None),
        ("12:05", "succeeded", None, None, None),
        ("12:10", "succeeded", None, None, None),
    ]


def test_sleep_runs_the_latest_once_and_coalesces_the_rest(engine: Engine) -> None:
    rid = engine.add("every5", "*/5 * * * *")
    engine.run_until(T0 + minutes(2))
    engine.clock.suspend(timedelta(hours=3), notify=False)
    engine.wake.set(WakeReason.SYSTEM_RESUMED)
    engine.run_until(T0 + timedelta(hours=3, minutes=3))
    assert stamps(engine, rid) == [
        ("12:00", "succeeded", None, None, None),
        ("12:05", "skipped", "missed", 35, "asleep"),
        ("15:00", "succeeded", None, None, "asleep"),  # caught up: it says why it ran late
    ]
    assert "slept" in event_kinds(engine)


def test_sleep_is_inferred_from_boot_time_without_a_notification(engine: Engine) -> None:
    rid = engine.add("every5", "*/5 * * * *")
    engine.run_until(T0 + minutes(2))
    engine.clock.suspend(timedelta(hours=1), notify=False)
    engine.run_until(T0 + timedelta(hours=1, minutes=3))  # woken by its deadline, late
    assert stamps(engine, rid)[1][1:] == ("skipped", "missed", 11, "asleep")


def test_skip_missed_runs_none_of_them(engine: Engine) -> None:
    rid = engine.add("every5", "*/5 * * * *", misfire=MisfirePolicy.SKIP_MISSED)
    engine.run_until(T0 + minutes(2))
    engine.clock.suspend(timedelta(hours=1))
    engine.wake.set(WakeReason.SYSTEM_RESUMED)
    engine.run_until(T0 + timedelta(hours=1, minutes=3))
    assert stamps(engine, rid) == [
        ("12:00", "succeeded", None, None, None),
        ("12:05", "skipped", "missed", 12, "asleep"),
    ]


def test_latest_outside_grace_is_coalesced_too(engine: Engine) -> None:
    rid = engine.add("every5", "*/5 * * * *", grace=timedelta(minutes=1))
    engine.run_until(T0 + minutes(2))
    engine.clock.suspend(timedelta(hours=1))
    engine.run_until(T0 + timedelta(hours=1, minutes=3))
    assert stamps(engine, rid)[1:] == [("12:05", "skipped", "missed", 12, "asleep")]


def test_forward_clock_jump_is_coalesced_with_its_cause(engine: Engine) -> None:
    rid = engine.add("every5", "*/5 * * * *", misfire=MisfirePolicy.SKIP_MISSED)
    engine.run_until(T0 + minutes(2))
    engine.clock.jump_wall(timedelta(minutes=30), notify=False)
    engine.wake.set(WakeReason.CLOCK_JUMPED)
    engine.run_until(engine.clock.now_utc() + minutes(1))
    assert stamps(engine, rid)[1:] == [("12:05", "skipped", "missed", 6, "clock_jump")]
    assert "clock_jumped" in event_kinds(engine)


def test_backward_clock_jump_never_reruns(engine: Engine) -> None:
    rid = engine.add("every5", "*/5 * * * *")
    engine.run_until(T0 + minutes(12))
    engine.clock.jump_wall(timedelta(hours=-1), notify=False)
    engine.wake.set(WakeReason.CLOCK_JUMPED)
    engine.run_until(T0 + minutes(16))  # the wall clock passes 12:00–12:12 a second time
    assert [s[0] for s in stamps(engine, rid)] == ["12:00", "12:05", "12:10", "12:15"]
    assert len(engine.runtime.launches) == 4
    assert "replanned" in event_kinds(engine)


def test_downtime_is_coalesced_as_app_not_running(tmp_path, clock: VirtualClock) -> None:
    first = make_engine(tmp_path / "d", clock)
    rid = first.add("hourly", "@hourly", misfire=MisfirePolicy.SKIP_MISSED)
    first.run_until(T0 + minutes(5))
    first.scheduler.shutdown()
    first.store.close()
    clock.advance(timedelta(hours=5))
    second = make_engine(tmp_path / "d", clock)
    second.run_until(clock.now_utc() + minutes(1))
    assert stamps(second, rid) == [
        ("12:00", "succeeded", None, None, None),
        ("13:00", "skipped", "missed", 5, "app_not_running"),
    ]
    assert "downtime" in event_kinds(second)


def test_a_shutdown_pass_settles_but_starts_nothing(engine: Engine) -> None:
    rid = engine.add("minutely", "* * * * *")
    engine.run_until(T0 + timedelta(seconds=30))
    engine.clock.advance_to(T0 + minutes(3) + timedelta(seconds=10))  # three moments are due
    engine.scheduler.shutdown()
    assert len(engine.runtime.launches) == 1  # only 12:00, before the shutdown
    report = engine.scheduler.last_report
    assert (report.trigger, report.claimed, report.dispatched) == ("shutdown", 0, 0)
    assert all(state != "claimed" for _, _, state, *_ in engine.history(rid))


def test_overlap_skip_skips_while_the_previous_run_is_active(engine: Engine) -> None:
    engine.runtime.auto_exit = None
    rid = engine.add("slow", "* * * * *")
    engine.run_until(T0 + minutes(2) + timedelta(seconds=30))
    assert stamps(engine, rid) == [
        ("12:00", "running", None, None, None),
        ("12:01", "skipped", "overlap", None, None),
        ("12:02", "skipped", "overlap", None, None),
    ]


def test_queue_one_lets_exactly_one_wait(engine: Engine) -> None:
    engine.runtime.auto_exit = None
    rid = engine.add("slow", "* * * * *", overlap=OverlapPolicy.QUEUE_ONE)
    engine.run_until(T0 + minutes(2) + timedelta(seconds=30))
    assert [s[1:3] for s in stamps(engine, rid)] == [
        ("running", None), ("planned", None), ("skipped", "overlap"),
    ]  # fmt: skip
    engine.runtime.finish(engine.runtime.launches[0])
    engine.run_until(engine.clock.now_utc())
    assert [s[1] for s in stamps(engine, rid)][:2] == ["succeeded", "running"]


def test_a_retry_is_not_overtaken_by_the_moment_queued_behind_its_run(engine: Engine) -> None:
    """12:00 runs until 13:30 and fails; 13:00 waits in the queue. The run of 12:00 is not over:
    its retry is due seconds later, so 13:00 waits on for it. Found by the simulation (seeds
    2067 and 2195): 13:00 started in the pass that scheduled the retry, and the retry, due
    at once, waited behind it for as long as 13:00 ran."""
    engine.runtime.auto_exit = None
    rid = engine.add("slow", "0 * * * *", overlap=OverlapPolicy.QUEUE_ONE, retries=1)
    engine.run_until(T0 + minutes(90))
    engine.runtime.finish(engine.runtime.launches[0], 1)
    engine.run_until(T0 + minutes(91))  # the backoff is at most 30 s
    launched = [(run.occurrence_id[-7:], run.attempt_id[-2:]) for run in engine.runtime.launches]
    assert launched == [("120000Z", ".1"), ("120000Z", ".2")]
    assert [s[1:3] for s in stamps(engine, rid)] == [("running", None), ("planned", None)]


def test_pause_then_resume_records_one_paused_window(engine: Engine) -> None:
    rid = engine.add("every5", "*/5 * * * *")
    engine.run_until(T0 + minutes(2))
    engine.operator.pause("every5", "holiday")
    engine.run_until(T0 + minutes(32))
    skipped = engine.operator.resume("every5")
    engine.run_until(T0 + minutes(36))
    assert skipped == 6
    assert stamps(engine, rid) == [
        ("12:00", "succeeded", None, None, None),
        ("12:05", "skipped", "paused", 6, "paused"),
        ("12:35", "succeeded", None, None, None),
    ]


def test_pause_all_stops_every_routine(engine: Engine) -> None:
    a, b = engine.add("a", "*/5 * * * *"), engine.add("b", "*/10 * * * *")
    engine.run_until(T0 + minutes(1))
    engine.operator.pause_all("maintenance")
    engine.run_until(T0 + minutes(21))
    assert engine.operator.resume_all() == 4 + 2
    assert [s[1] for s in stamps(engine, a)] == ["succeeded", "skipped"]
    assert [s[1] for s in stamps(engine, b)] == ["succeeded", "skipped"]


def test_add_wakes_the_loop_at_once(engine: Engine) -> None:
    engine.run_until(T0 + minutes(1))
    assert engine.scheduler.deadline == T0 + minutes(10)  # nothing due: only retention
    engine.add("now", "* * * * *")
    assert engine.wake.is_set()


def test_edit_replans_only_the_future(engine: Engine) -> None:
    rid = engine.add("r", "*/10 * * * *")
    engine.run_until(T0 + minutes(15))
    engine.operator.edit_routine("r", lambda spec: replace(spec, schedule="*/7 * * * *"))
    engine.run_until(T0 + minutes(30))
    assert [s[0] for s in stamps(engine, rid)] == ["12:00", "12:10", "12:21", "12:28"]
    revisions = {row[0] for row in engine.store.conn.execute(
        "SELECT revision FROM occurrences WHERE routine_id = ?", (rid,))}  # fmt: skip
    assert revisions == {1, 2}


def test_delete_skips_waiting_and_plans_nothing_more(engine: Engine) -> None:
    rid = engine.add("r", "*/5 * * * *")
    engine.run_until(T0 + minutes(6))
    engine.operator.delete_routine("r")
    engine.run_until(T0 + minutes(30))
    assert len(stamps(engine, rid)) == 2


def test_new_york_spring_gap_is_a_durable_skip(tmp_path) -> None:
    clock = VirtualClock(datetime(2026, 3, 7, 12, tzinfo=UTC))
    engine = make_engine(tmp_path / "d", clock)
    rid = engine.add("nightly", "30 2 * * *", tz="America/New_York")
    engine.run_until(datetime(2026, 3, 10, 12, tzinfo=UTC))
    rows = list(engine.store.conn.execute(
        "SELECT local_time, utc_offset, disposition, reason, id FROM occurrences "
        "WHERE routine_id = ? ORDER BY local_time", (rid,)))  # fmt: skip
    assert [r[:4] for r in rows] == [
        ("2026-03-08T02:30:00", -18000, "skipped", "nonexistent_local_time"),
        ("2026-03-09T02:30:00", -14400, "succeeded", None),
        ("2026-03-10T02:30:00", -14400, "succeeded", None),
    ]
    assert rows[0][4].endswith("~gap")


def test_new_york_fall_fold_runs_once(tmp_path) -> None:
    clock = VirtualClock(datetime(2026, 10, 31, 12, tzinfo=UTC))
    engine = make_engine(tmp_path / "d", clock)
    rid = engine.add("nightly", "*/30 1 * * *", tz="America/New_York")
    engine.run_until(datetime(2026, 11, 1, 12, tzinfo=UTC))
    locals_ = [row[0] for row in engine.store.conn.execute(
        "SELECT local_time FROM occurrences WHERE routine_id = ? AND scheduled_utc >= ? "
        "ORDER BY scheduled_utc", (rid, "2026-11-01"))]  # fmt: skip
    assert locals_ == ["2026-11-01T01:00:00", "2026-11-01T01:30:00"]


def test_every_pass_is_recorded(engine: Engine) -> None:
    engine.add("r", "*/5 * * * *")
    engine.run_until(T0 + minutes(6))
    rows = list(engine.store.conn.execute(
        "SELECT wake_reason, role, planned, claimed, dispatched, settled FROM passes ORDER BY id"))  # fmt: skip
    assert rows[0][:2] == ("startup", "leader")
    assert sum(r[4] for r in rows) == 2 and sum(r[5] for r in rows) == 2


def test_events_have_sequence_numbers_for_catching_up(engine: Engine) -> None:
    engine.add("r", "*/5 * * * *")
    engine.run_until(T0 + minutes(1))
    first = events.since(engine.store.conn, 0)
    later = events.since(engine.store.conn, first[2].seq)
    assert [e.seq for e in first] == sorted(e.seq for e in first)
    assert later == first[3:]
    assert [e.kind for e in first[:4]] == [
        EventKind.ROUTINE_ADDED, EventKind.LEADER_CHANGED, EventKind.PLANNED, EventKind.CLAIMED,
    ]  # fmt: skip


def test_claims_are_bounded_per_pass_and_by_concurrency(tmp_path, clock) -> None:
    engine = make_engine(tmp_path / "d", clock, claim_batch=10, max_active=4)
    engine.runtime.auto_exit = None
    for index in range(30):
        engine.add(f"r{index:02d}", "5 12 * * *")
    engine.run_until(T0 + minutes(5))
    assert engine.scheduler.last_report.claimed == 4
    assert len(engine.runtime.running) == 4
    for launch in list(engine.runtime.running.values()):
        engine.runtime.finish(launch)
    engine.run_until(engine.clock.now_utc())
    assert len(engine.runtime.launches) == 8


@pytest.mark.parametrize("hours", [24 * 30])
def test_a_month_asleep_is_one_row_not_forty_thousand(engine: Engine, hours: int) -> None:
    rid = engine.add("minutely", "* * * * *")
    engine.run_until(T0 + minutes(1))
    engine.clock.suspend(timedelta(hours=hours))
    engine.wake.set(WakeReason.SYSTEM_RESUMED)
    engine.run_until(engine.clock.now_utc() + timedelta(seconds=1))
    rows = stamps(engine, rid)
    missed = [row for row in rows if row[2] == "missed"]
    assert len(rows) <= 5  # two before sleep, one window, the moment(s) reached on time
    assert missed == [("12:02", "skipped", "missed", hours * 60 - 2, "asleep")]


def test_resume_all_without_pause_changes_nothing(engine: Engine) -> None:
    rid = engine.add("r", "every 1m")
    engine.run_until(T0 + minutes(2))
    engine.clock.advance(minutes(10))  # no passes: as if the app were not running
    assert engine.operator.resume_all() == 0
    engine.run_until(engine.clock.now_utc())
    reasons = [s[2] for s in stamps(engine, rid)]
    assert "paused" not in reasons and "missed" in reasons
    assert stamps(engine, rid)[-1][1] in ("succeeded", "skipped")


def test_moments_missed_before_a_pause_are_not_blamed_on_it(engine: Engine) -> None:
    rid = engine.add("r", "every 1m")
    engine.run_until(T0 + minutes(2))
    engine.clock.advance(minutes(5))  # the scheduler did not run
    engine.operator.pause("r")
    engine.clock.advance(minutes(5))
    assert engine.operator.resume("r") == 6  # 12:07 … 12:12
    causes = [(s[2], s[3], s[4]) for s in stamps(engine, rid) if s[3]]
    assert causes == [("missed", 4, "app_not_running"), ("paused", 6, "paused")]


def test_retention_sweeps_from_the_loop_and_keeps_the_store_bounded(engine: Engine) -> None:
    from dataclasses import replace as with_

    sweeper = engine.scheduler.sweeper
    sweeper.policy, sweeper.pause = with_(sweeper.policy, events_max_rows=20), None
    engine.add("r", "* * * * *")
    engine.run_until(T0 + minutes(9))
    assert engine.store.conn.execute("SELECT count(*) FROM events").fetchone()[0] > 20
    engine.run_until(T0 + minutes(10) + timedelta(seconds=1))
    assert engine.store.conn.execute("SELECT count(*) FROM events").fetchone()[0] <= 30
    assert engine.scheduler.deadline is not None


@pytest.mark.parametrize("notified", [True, False])
def test_a_backoff_is_elapsed_time_whatever_the_wall_clock_does(
    engine: Engine, notified: bool
) -> None:
    """13:00 fails; its retry waits at most 30 s. The wall clock is then set back six hours:
    the retry still starts within those 30 s, not six hours later (simulation seed
    2048113717: a retry waiting only for a free slot waited out the jump again)."""
    engine.runtime.auto_exit = 1
    rid = engine.add("flaky", "0 13 * * *", retries=1)
    engine.run_until(T0 + minutes(60))
    assert len(engine.runtime.launches) == 1
    engine.clock.jump_wall(timedelta(hours=-6), notify=False)
    if notified:
        engine.wake.set(WakeReason.CLOCK_JUMPED)
    else:  # the loop waits on the monotonic clock, at most SAFETY_CAP, then looks again
        engine.clock.advance_to(engine.clock.now_utc() + SAFETY_CAP)
        engine.scheduler.pass_once(WakeReason.SAFETY_CAP.value)
    engine.run_until(engine.clock.now_utc() + minutes(1))
    assert [run.attempt_id[-2:] for run in engine.runtime.launches] == [".1", ".2"]
    assert stamps(engine, rid)[0][1] == "failed"
    jumped = [e for e in events.since(engine.store.conn, 0, 10_000) if e.kind == "clock_jumped"]
    assert [e.data["backoffs"] for e in jumped] == [1]
