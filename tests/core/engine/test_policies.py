"""Policies decided per moment (issue #23, DESIGN §14), under virtual time: each decision is
durable, carries its stable code and its inputs, and is told in sentences."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta

import pytest

from coven_core.errors import ValidationError
from coven_core.model import OverlapPolicy
from coven_core.queries import explain, history
from coven_core.views.explain import explain_occurrence
from coven_core.views.inspection import inspect
from tests.core.conftest import T0, Engine

DAY = timedelta(days=1)


def outcomes(engine: Engine, rid: str) -> list[tuple[str, str | None, str | None]]:
    """(local date-time, disposition or state, reason) per scheduled occurrence."""
    rows = engine.store.conn.execute(
        "SELECT local_time, coalesce(disposition, state), reason FROM occurrences "
        "WHERE routine_id = ? AND kind = 'scheduled' ORDER BY scheduled_utc",
        (rid,),
    )
    return [(local[:16], outcome, reason) for local, outcome, reason in rows]


def codes(engine: Engine, rid: str) -> list[tuple[str, str | None]]:
    """(disposition or state, decision code) per scheduled occurrence: a failure's reason,
    its message, is left out."""
    return [(o[1], None if o[1] == "failed" else o[2]) for o in outcomes(engine, rid)]


def decision_of(engine: Engine, rid: str, local: str) -> dict[str, object]:
    (stored,) = engine.store.conn.execute(
        "SELECT decision FROM occurrences WHERE routine_id = ? AND local_time LIKE ?",
        (rid, f"{local}%"),
    ).fetchone()
    return dict(json.loads(stored))


# -- exclusion dates (EXDATE on the local date) -------------------------------------------------


def test_moments_on_an_excluded_local_date_are_skipped_with_their_date(engine: Engine) -> None:
    # 23:30 in New York is already the next day in UTC: the local date decides.
    excluded = (date(2026, 3, 2),)
    rid = engine.add("nightly", "30 23 * * *", "America/New_York", except_dates=excluded)
    engine.run_until(T0 + 3 * DAY)
    assert outcomes(engine, rid) == [
        ("2026-03-01T23:30", "succeeded", None),
        ("2026-03-02T23:30", "skipped", "excluded_date"),
        ("2026-03-03T23:30", "succeeded", None),
    ]
    assert decision_of(engine, rid, "2026-03-02") == {"date": "2026-03-02"}
    assert len(engine.runtime.launches) == 2


def test_an_excluded_moment_missed_while_asleep_is_still_excluded(engine: Engine) -> None:
    rid = engine.add("daily", "0 13 * * *", except_dates=(date(2026, 3, 1),))
    engine.clock.suspend(timedelta(hours=2), notify=False)
    engine.run_until(T0 + timedelta(hours=2, minutes=5))
    assert outcomes(engine, rid) == [("2026-03-01T13:00", "skipped", "excluded_date")]
    assert engine.runtime.launches == []


def test_a_gap_stays_a_gap_on_an_excluded_date(engine: Engine) -> None:
    # 02:30 does not exist in New York on 2026-03-08: the DST policy decides it first.
    rid = engine.add("early", "30 2 * * *", "America/New_York", except_dates=(date(2026, 3, 8),))
    engine.run_until(datetime(2026, 3, 9, 12, tzinfo=UTC))
    assert ("2026-03-08T02:30", "skipped", "nonexistent_local_time") in outcomes(engine, rid)


def test_excluded_moments_count_toward_count(engine: Engine) -> None:
    # RFC 5545: EXDATE removes moments from the set COUNT made; it does not extend it.
    rule = "rrule:FREQ=DAILY;COUNT=3;BYHOUR=13;BYMINUTE=0"
    rid = engine.add("three", rule, except_dates=(date(2026, 3, 2),))
    engine.run_until(T0 + 5 * DAY)
    assert [o[1:] for o in outcomes(engine, rid)] == [
        ("succeeded", None), ("skipped", "excluded_date"), ("succeeded", None),
    ]  # fmt: skip


def test_an_edit_changes_exclusions_for_future_moments_only(engine: Engine) -> None:
    rid = engine.add("daily", "0 13 * * *", except_dates=(date(2026, 3, 1),))
    engine.run_until(T0 + timedelta(hours=2))
    engine.operator.edit_routine("daily", lambda s: replace(s, except_dates=(date(2026, 3, 2),)))
    engine.run_until(T0 + 3 * DAY)
    assert [o[1:] for o in outcomes(engine, rid)] == [
        ("skipped", "excluded_date"), ("skipped", "excluded_date"), ("succeeded", None),
    ]  # fmt: skip


def test_explain_and_history_tell_the_exclusion(engine: Engine) -> None:
    rid = engine.add("daily", "0 13 * * *", except_dates=(date(2026, 3, 2), date(2026, 3, 4)))
    upcoming = explain(engine.store, "daily", T0)
    assert [upcoming.upcoming.skip_reason(m) for m in upcoming.upcoming.moments[:4]] == [
        None, "excluded_date", None, "excluded_date",
    ]  # fmt: skip
    engine.run_until(T0 + 2 * DAY)
    _view, rows = history(engine.store, "daily")
    skipped = next(row for row in rows if row.reason == "excluded_date")
    assert skipped.to_json()["decision"] == {"date": "2026-03-02"}
    told = explain_occurrence(engine.store, skipped.occurrence_id, "en_US")
    assert told.outcome == (
        "It was skipped (the date is excluded). Its date, 2026-03-02, is one of the routine's "
        "exclusion dates."
    )
    assert inspect(engine.store, skipped.occurrence_id)["occurrence"]["reason"] == "excluded_date"
    assert rid


# -- trial (shadow) mode ------------------------------------------------------------------------


def test_a_shadow_routine_decides_every_moment_and_starts_nothing(engine: Engine) -> None:
    rid = engine.add("trial", "0 * * * *", shadow=True, except_dates=(date(2026, 3, 2),))
    engine.run_until(T0 + timedelta(hours=2, minutes=5))
    assert outcomes(engine, rid) == [
        ("2026-03-01T12:00", "shadowed", "would_run"),
        ("2026-03-01T13:00", "shadowed", "would_run"),
        ("2026-03-01T14:00", "shadowed", "would_run"),
    ]
    assert engine.runtime.launches == []
    assert decision_of(engine, rid, "2026-03-01T13") == {
        "would": "run", "command": ["/bin/true"], "shell": False, "timeout_seconds": 86400.0,
        "manual": False,
    }  # fmt: skip
    count = engine.store.conn.execute("SELECT count(*) FROM attempts").fetchone()[0]
    assert count == 0


def test_a_shadow_routine_records_what_would_have_been_skipped(engine: Engine) -> None:
    rid = engine.add("trial", "0 13 * * *", shadow=True, except_dates=(date(2026, 3, 2),))
    engine.run_until(T0 + 2 * DAY)
    engine.operator.pause("trial", "away")
    engine.run_until(T0 + 4 * DAY)
    engine.operator.resume("trial")
    assert outcomes(engine, rid)[:2] == [
        ("2026-03-01T13:00", "shadowed", "would_run"),
        ("2026-03-02T13:00", "shadowed", "excluded_date"),
    ]
    assert decision_of(engine, rid, "2026-03-02") == {"date": "2026-03-02", "would": "skip"}
    window = engine.store.conn.execute(
        "SELECT disposition, reason, window_count FROM occurrences WHERE kind = 'coalesced'"
    ).fetchone()
    assert window == ("shadowed", "paused", 2)
    assert engine.runtime.launches == []


def test_run_now_on_a_shadow_routine_is_decided_and_not_started(engine: Engine) -> None:
    engine.add("trial", "0 13 * * *", shadow=True)
    engine.operator.run_now("trial", key="try-it")
    engine.run_until(T0 + timedelta(minutes=1))
    row = engine.store.conn.execute(
        "SELECT disposition, reason, decision FROM occurrences WHERE kind = 'manual'"
    ).fetchone()
    assert row[:2] == ("shadowed", "would_run") and json.loads(row[2])["manual"] is True
    assert engine.runtime.launches == []


def test_making_it_live_is_a_new_revision_from_now(engine: Engine) -> None:
    rid = engine.add("trial", "0 * * * *", shadow=True)
    engine.run_until(T0 + timedelta(minutes=30))
    engine.operator.edit_routine("trial", lambda spec: replace(spec, shadow=False))
    engine.run_until(T0 + timedelta(hours=1, minutes=5))
    assert outcomes(engine, rid) == [
        ("2026-03-01T12:00", "shadowed", "would_run"),
        ("2026-03-01T13:00", "succeeded", None),
    ]
    assert len(engine.runtime.launches) == 1


def test_the_trial_is_told_in_sentences(engine: Engine) -> None:
    engine.add("trial", "0 13 * * *", shadow=True)
    engine.run_until(T0 + timedelta(hours=1, minutes=5))
    _view, [row] = history(engine.store, "trial")
    told = explain_occurrence(engine.store, row.occurrence_id, "en_US")
    assert told.outcome == (
        "It was a trial (it would have run): nothing was started. A trial: it would have run "
        "/bin/true; nothing was started."
    )


# -- budgets ------------------------------------------------------------------------------------


def test_runs_over_the_days_budget_are_skipped_with_its_state(engine: Engine) -> None:
    rid = engine.add("hourly", "0 * * * *", max_runs_per_day=2)
    engine.run_until(T0 + timedelta(hours=3, minutes=5))
    assert [o[1:] for o in outcomes(engine, rid)] == [
        ("succeeded", None), ("succeeded", None), ("skipped", "budget_exhausted"),
        ("skipped", "budget_exhausted"),
    ]  # fmt: skip
    assert decision_of(engine, rid, "2026-03-01T14") == {
        "day": "2026-03-01", "zone": "UTC", "runs": 2, "max_runs": 2,
    }  # fmt: skip
    assert len(engine.runtime.launches) == 2


def test_the_day_is_the_routines_own_and_a_new_day_has_a_new_budget(engine: Engine) -> None:
    # Tokyo is UTC+9: its day ends at 15:00 UTC.
    rid = engine.add("hourly", "0 * * * *", "Asia/Tokyo", max_runs_per_day=1)
    engine.run_until(T0 + timedelta(hours=4, minutes=5))
    assert [o[1:] for o in outcomes(engine, rid)] == [
        ("succeeded", None), ("skipped", "budget_exhausted"), ("skipped", "budget_exhausted"),
        ("succeeded", None), ("skipped", "budget_exhausted"),
    ]  # fmt: skip


def test_run_time_counts_what_attempts_spent_running_that_day(engine: Engine) -> None:
    engine.runtime.auto_exit = None  # commands run until the test ends them
    rid = engine.add("often", "*/10 * * * *", max_runtime_per_day=timedelta(minutes=15))
    engine.run_until(T0 + timedelta(minutes=1))
    engine.clock.advance(timedelta(minutes=8))
    engine.runtime.finish(engine.runtime.launches[0])
    engine.run_until(T0 + timedelta(minutes=11))  # 12:00-12:09: 9 of 15 minutes used: runs
    engine.clock.advance(timedelta(minutes=8))
    engine.runtime.finish(engine.runtime.launches[1])
    engine.run_until(T0 + timedelta(minutes=21))  # 12:10-12:19: 18 minutes used: over
    assert [o[1:] for o in outcomes(engine, rid)] == [
        ("succeeded", None), ("succeeded", None), ("skipped", "budget_exhausted"),
    ]  # fmt: skip
    inputs = decision_of(engine, rid, "2026-03-01T12:20")
    assert (inputs["runtime_seconds"], inputs["max_runtime_seconds"]) == (1080.0, 900.0)


def test_a_manual_run_goes_ahead_is_counted_and_marked(engine: Engine) -> None:
    rid = engine.add("daily", "0 13 * * *", max_runs_per_day=1)
    engine.operator.run_now("daily", key="first")
    engine.operator.run_now("daily", key="second")
    engine.run_until(T0 + timedelta(hours=1, minutes=5))
    marks = [
        json.loads(stored)
        for (stored,) in engine.store.conn.execute(
            "SELECT decision FROM occurrences WHERE kind = 'manual'"
        )
    ]
    assert sorted((m["budget"]["runs"], m["over_budget"]) for m in marks) == [(0, False), (1, True)]
    assert outcomes(engine, rid) == [("2026-03-01T13:00", "skipped", "budget_exhausted")]
    assert len(engine.runtime.launches) == 2


def test_the_budget_is_told_in_a_sentence(engine: Engine) -> None:
    engine.add("hourly", "0 * * * *", max_runs_per_day=1)
    engine.run_until(T0 + timedelta(hours=1, minutes=5))
    _view, rows = history(engine.store, "hourly")
    told = explain_occurrence(engine.store, rows[0].occurrence_id, "en_US")
    assert told.outcome == (
        "It was skipped (the day's budget was used up). The budget of 2026-03-01 was used up: "
        "1 of 1 run."
    )


# -- cooldown -----------------------------------------------------------------------------------


def test_a_failure_starts_a_cooldown_that_doubles_and_a_success_resets(engine: Engine) -> None:
    rid = engine.add("often", "*/10 * * * *", cooldown=timedelta(minutes=15), quarantine_after=0)
    engine.runtime.auto_exit = 1  # 12:00 fails: rest until 12:15
    engine.run_until(T0 + timedelta(minutes=21))  # 12:10 skipped; 12:20 runs and fails
    engine.runtime.auto_exit = 0  # second failure in a row: rest 30m, until 12:50
    engine.run_until(T0 + timedelta(minutes=61))  # 12:30, 12:40 skipped; 12:50 runs: success
    engine.run_until(T0 + timedelta(minutes=71))  # reset: 13:00 runs
    assert codes(engine, rid) == [
        ("failed", None), ("skipped", "cooldown"), ("failed", None), ("skipped", "cooldown"),
        ("skipped", "cooldown"), ("succeeded", None), ("succeeded", None), ("succeeded", None),
    ]  # fmt: skip
    inputs = decision_of(engine, rid, "2026-03-01T12:40")
    assert (inputs["failures"], inputs["seconds"]) == (2, 1800.0)
    assert inputs["until"].startswith("2026-03-01T12:50")


def test_the_cooldown_stops_doubling_at_its_cap(engine: Engine) -> None:
    spec = {"cooldown": timedelta(minutes=10), "cooldown_max": timedelta(minutes=25)}
    rid = engine.add("often", "*/5 * * * *", quarantine_after=0, **spec)
    engine.runtime.auto_exit = 1
    engine.run_until(T0 + timedelta(hours=2))
    ran = [o[0][11:] for o in outcomes(engine, rid) if o[1] == "failed"]
    assert ran == ["12:00", "12:10", "12:30", "12:55", "13:20", "13:45"]  # 10m, 20m, then 25m


def test_a_manual_run_is_not_held_back_by_a_cooldown(engine: Engine) -> None:
    engine.add("daily", "0 12 * * *", cooldown=timedelta(hours=6))
    engine.runtime.auto_exit = 1
    engine.run_until(T0 + timedelta(minutes=1))
    engine.operator.run_now("daily", key="fix")
    engine.run_until(T0 + timedelta(minutes=2))
    assert len(engine.runtime.launches) == 2


def test_the_cooldown_is_told_in_a_sentence(engine: Engine) -> None:
    engine.add("often", "*/10 * * * *", cooldown=timedelta(minutes=15))
    engine.runtime.auto_exit = 1
    engine.run_until(T0 + timedelta(minutes=11))
    _view, rows = history(engine.store, "often")
    told = explain_occurrence(engine.store, rows[0].occurrence_id, "en_US")
    assert told.outcome == (
        "It was skipped (cooling down after failures). The routine was cooling down after 1 "
        "failed run in a row, until 2026-03-01 12:15 UTC."
    )


# -- groups and max-active ----------------------------------------------------------------------


def test_a_group_runs_one_member_at_a_time_and_names_the_holder(engine: Engine) -> None:
    engine.runtime.auto_exit = None  # commands run until the test ends them
    names = {engine.add("backup", "0 * * * *", group="disk"): "backup",
             engine.add("scrub", "0 * * * *", group="disk"): "scrub"}  # fmt: skip
    engine.run_until(T0 + timedelta(minutes=1))
    [launch] = engine.runtime.launches  # the first by (moment, id) holds the group
    [other] = set(names) - {launch.routine_id}
    [(_local, outcome, reason)] = outcomes(engine, other)
    assert (outcome, reason) == ("skipped", "group_busy")
    run = engine.store.conn.execute(
        "SELECT run_id FROM occurrences WHERE id = ?", (launch.occurrence_id,)
    ).fetchone()[0]
    assert decision_of(engine, other, "2026-03-01T12:00") == {
        "group": "disk", "holder": names[launch.routine_id], "holder_run": run,
    }  # fmt: skip


def test_queue_one_waits_for_the_group_and_then_runs(engine: Engine) -> None:
    engine.runtime.auto_exit = None
    for name in ("backup", "scrub"):
        engine.add(name, "0 * * * *", group="disk", overlap=OverlapPolicy.QUEUE_ONE)
    engine.run_until(T0 + timedelta(minutes=1))
    [first] = engine.runtime.launches
    engine.clock.advance(timedelta(minutes=5))
    engine.runtime.finish(first)
    engine.run_until(T0 + timedelta(minutes=7))
    [_first, second] = engine.runtime.launches
    assert second.routine_id != first.routine_id


def test_a_member_between_two_attempts_holds_the_group(engine: Engine) -> None:
    """A run waiting out its retry's backoff is not over: a person's run of another member
    waits for it (a scheduled moment would be skipped, naming it)."""
    engine.runtime.auto_exit = 1  # backup's first attempt fails
    backup = engine.add("backup", "0 13 * * *", group="disk", retries=1)
    scrub = engine.add("scrub", "0 3 * * *", group="disk")
    engine.run_until(T0 + timedelta(hours=1))
    between = engine.store.conn.execute(
        "SELECT count(*) FROM occurrences WHERE routine_id = ? AND state = 'planned' "
        "AND not_before IS NOT NULL", (backup,)
    ).fetchone()[0]  # fmt: skip
    assert between == 1  # its retry waits
    engine.runtime.auto_exit = 0
    engine.operator.run_now("scrub")
    engine.run_until(engine.clock.now_utc())
    assert [launch.routine_id for launch in engine.runtime.launches] == [backup]
    engine.run_until(T0 + timedelta(hours=2))
    assert [launch.routine_id for launch in engine.runtime.launches] == [backup, backup, scrub]


def test_routines_outside_the_group_are_not_held(engine: Engine) -> None:
    engine.runtime.auto_exit = None
    engine.add("backup", "0 * * * *", group="disk")
    engine.add("scrub", "0 * * * *", group="net")
    engine.add("report", "0 * * * *")
    engine.run_until(T0 + timedelta(minutes=1))
    assert len(engine.runtime.launches) == 3


def test_max_active_is_a_setting(engine: Engine) -> None:
    engine.runtime.auto_exit = None
    engine.operator.set_setting("max-active", "2")
    for name in ("a", "b", "c"):
        engine.add(name, "0 * * * *", overlap=OverlapPolicy.QUEUE_ONE)
    engine.run_until(T0 + timedelta(minutes=1))
    assert len(engine.runtime.launches) == 2
    engine.runtime.finish(engine.runtime.launches[0])
    engine.run_until(T0 + timedelta(minutes=2))
    assert len(engine.runtime.launches) == 3


def test_the_group_is_told_in_a_sentence(engine: Engine) -> None:
    engine.runtime.auto_exit = None
    engine.add("backup", "0 * * * *", group="disk")
    engine.add("scrub", "0 * * * *", group="disk")
    engine.run_until(T0 + timedelta(minutes=1))
    [launch] = engine.runtime.launches
    holder = _name(engine, launch.routine_id)
    held = "scrub" if holder == "backup" else "backup"
    _view, [row] = history(engine.store, held)
    told = explain_occurrence(engine.store, row.occurrence_id, "en_US")
    assert told.outcome.startswith(
        f"It was skipped (another routine of its group was running). Routine {holder} of "
        "group disk was running (run "
    )


def _name(engine: Engine, routine_id: str) -> str:
    query = "SELECT name FROM routines WHERE id = ?"
    return str(engine.store.conn.execute(query, (routine_id,)).fetchone()[0])


# -- chains -------------------------------------------------------------------------------------


def test_an_upstream_success_triggers_one_downstream_occurrence(engine: Engine) -> None:
    upstream = engine.add("backup", "0 13 * * *")
    downstream = engine.add("verify", "once 2030-01-01T00:00", after="backup")
    engine.run_until(T0 + timedelta(hours=1, minutes=5))
    up = f"{upstream}@20260301T130000Z"
    rows = engine.store.conn.execute(
        "SELECT id, kind, disposition, decision FROM occurrences WHERE routine_id = ?",
        (downstream,),
    ).fetchall()
    assert [(oid, kind, disposition) for oid, kind, disposition, _d in rows] == [
        (f"{downstream}@after:{up}", "triggered", "succeeded"),
    ]
    assert json.loads(rows[0][3]) == {
        "upstream": up, "upstream_routine": "backup", "outcome": "succeeded",
    }  # fmt: skip
    assert [launch.routine_id for launch in engine.runtime.launches] == [upstream, downstream]


def test_a_failure_triggers_only_finished_chains(engine: Engine) -> None:
    engine.add("backup", "0 13 * * *")
    on_success = engine.add("verify", "once 2030-01-01T00:00", after="backup")
    on_end = engine.add("notify", "once 2030-01-01T00:00", after="backup", after_outcome="finished")
    engine.runtime.auto_exit = 1
    engine.run_until(T0 + timedelta(hours=1, minutes=5))
    kinds = dict(
        engine.store.conn.execute(
            "SELECT routine_id, kind FROM occurrences WHERE kind = 'triggered'"
        )
    )
    assert kinds == {on_end: "triggered"} and on_success not in kinds


def test_a_paused_downstream_records_the_trigger_as_skipped(engine: Engine) -> None:
    engine.add("backup", "0 13 * * *")
    downstream = engine.add("verify", "once 2030-01-01T00:00", after="backup")
    engine.operator.pause("verify", "later")
    engine.run_until(T0 + timedelta(hours=1, minutes=5))
    assert engine.store.conn.execute(
        "SELECT kind, disposition, reason FROM occurrences WHERE routine_id = ?", (downstream,)
    ).fetchall() == [("triggered", "skipped", "paused")]


def test_cycles_are_refused_by_name(engine: Engine) -> None:
    engine.add("a", "0 13 * * *")
    engine.add("b", "0 13 * * *", after="a")
    engine.add("c", "0 13 * * *", after="b")
    with pytest.raises(ValidationError, match="a chain cannot loop: a → c → b → a"):
        engine.operator.edit_routine("a", lambda spec: replace(spec, after="c"))
    with pytest.raises(ValidationError, match="a chain cannot loop: a → a"):
        engine.operator.edit_routine("a", lambda spec: replace(spec, after="a"))
    with pytest.raises(ValidationError, match="--after: no routine named 'nobody'"):
        engine.add("d", "0 13 * * *", after="nobody")


def test_the_trigger_is_told_in_a_sentence(engine: Engine) -> None:
    upstream = engine.add("backup", "0 13 * * *")
    engine.add("verify", "once 2030-01-01T00:00", after="backup")
    engine.run_until(T0 + timedelta(hours=1, minutes=5))
    _view, [row] = history(engine.store, "verify")
    told = explain_occurrence(engine.store, row.occurrence_id, "en_US")
    assert told.outcome == (
        f"It succeeded. Triggered by routine backup: its occurrence {upstream}@20260301T130000Z "
        "succeeded."
    )


# -- interplay ----------------------------------------------------------------------------------


def test_a_chained_routine_in_a_group_over_its_budget(engine: Engine) -> None:
    """Each trigger meets the downstream's own rules: the group (another member runs), then
    the budget (one run a day); the upstream stays on record through both."""
    engine.runtime.auto_exit = None
    upstream = engine.add("backup", "0 * * * *")
    downstream = engine.add("verify", "once 2030-01-01T00:00", after="backup", group="disk",
                            max_runs_per_day=1)  # fmt: skip
    engine.add("scrub", "0 12 * * *", group="disk")
    engine.run_until(T0 + timedelta(minutes=1))  # backup and scrub start at 12:00
    by_routine = {launch.routine_id: launch for launch in engine.runtime.launches}
    engine.runtime.finish(by_routine[upstream])  # verify is due while scrub holds the group
    engine.run_until(T0 + timedelta(minutes=2))
    engine.runtime.finish(next(iter(engine.runtime.running.values())))  # scrub ends
    for hour in (1, 2):  # backup 13:00 succeeds: verify runs; 14:00: over its budget
        engine.run_until(T0 + timedelta(hours=hour, minutes=1))
        for launch in list(engine.runtime.running.values()):
            engine.runtime.finish(launch)
        engine.run_until(T0 + timedelta(hours=hour, minutes=2))
        for launch in list(engine.runtime.running.values()):
            engine.runtime.finish(launch)
    rows = engine.store.conn.execute(
        "SELECT coalesce(disposition, state), reason, decision FROM occurrences "
        "WHERE routine_id = ? ORDER BY scheduled_utc",
        (downstream,),
    ).fetchall()
    assert [(outcome, reason) for outcome, reason, _d in rows] == [
        ("skipped", "group_busy"), ("succeeded", None), ("skipped", "budget_exhausted"),
    ]  # fmt: skip
    held, _ran, over = (json.loads(decision) for _o, _r, decision in rows)
    assert held["upstream"] == f"{upstream}@20260301T120000Z" and held["holder"] == "scrub"
    assert over["upstream"] == f"{upstream}@20260301T140000Z"
    assert (over["runs"], over["max_runs"]) == (1, 1)


def test_a_routine_without_a_schedule_runs_only_after_its_upstream(engine: Engine) -> None:
    upstream = engine.add("backup", "0 13 * * *")
    downstream = engine.add("verify", "after", after="backup")
    routine = engine.store.conn.execute(
        "SELECT next_due FROM routines WHERE id = ?", (downstream,)
    ).fetchone()
    assert routine == (None,)  # nothing of its own is ever due
    engine.run_until(T0 + 2 * DAY + timedelta(hours=2))
    kinds = engine.store.conn.execute(
        "SELECT kind, disposition FROM occurrences WHERE routine_id = ?", (downstream,)
    ).fetchall()
    assert kinds == [("triggered", "succeeded")] * 3
    assert [launch.routine_id for launch in engine.runtime.launches] == [upstream, downstream] * 3
    assert explain(engine.store, "verify", engine.clock.now_utc()).verdict == (
        "It has no schedule of its own: it runs each time a run of backup succeeds."
    )


def test_a_routine_without_a_schedule_needs_an_upstream(engine: Engine) -> None:
    with pytest.raises(ValidationError, match="no schedule of its own: give --after ROUTINE"):
        engine.add("verify", "after")
    engine.add("backup", "0 13 * * *")
    engine.add("verify", "after", after="backup")
    with pytest.raises(ValidationError, match="no schedule of its own"):
        engine.operator.edit_routine("verify", lambda spec: replace(spec, after=None))
