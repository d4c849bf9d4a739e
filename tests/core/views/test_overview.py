"""The tray's snapshot counts what matters and honours pause-all (issue #21.1)."""

from __future__ import annotations

from datetime import UTC
from zoneinfo import ZoneInfo

from coven_core.views.overview import Counts, TrayState, overview
from coven_core.views.tooltip import tooltip
from tests.core.conftest import T0, Engine, minutes


def failing(engine: Engine, name: str = "backup", schedule: str = "1 12 * * *") -> None:
    engine.add(name, schedule, quarantine_after=5)
    engine.runtime.auto_exit = 1


def test_a_failed_run_nobody_opened_puts_the_tray_in_error_until_it_is_seen(
    engine: Engine,
) -> None:
    failing(engine)
    engine.run_until(T0 + minutes(2))
    shown = overview(engine.store, engine.clock.now_utc())
    assert shown.state is TrayState.ERROR
    assert shown.counts == Counts(failed_unseen=1)
    (run_id,) = [r[0] for r in engine.store.conn.execute("SELECT run_id FROM occurrences")]
    assert engine.operator.mark_seen(run_id) is True
    assert engine.operator.mark_seen(run_id) is False  # already seen: nothing changes
    again = overview(engine.store, engine.clock.now_utc())
    assert again.state is TrayState.IDLE and again.counts.failed_unseen == 0


def test_mark_all_seen_counts_what_it_marked_and_a_retry_makes_a_run_unseen_again(
    engine: Engine,
) -> None:
    failing(engine, schedule="* * * * *")
    engine.run_until(T0 + minutes(3))
    assert overview(engine.store, engine.clock.now_utc()).counts.failed_unseen == 4
    assert engine.operator.mark_all_seen() == 4
    assert overview(engine.store, engine.clock.now_utc()).counts.failed_unseen == 0
    run_id = engine.store.conn.execute("SELECT run_id FROM occurrences LIMIT 1").fetchone()[0]
    engine.operator.retry(run_id)
    engine.run_until(T0 + minutes(3))
    assert overview(engine.store, engine.clock.now_utc()).counts.failed_unseen == 1


def test_a_running_run_is_not_marked_seen_before_it_ends(engine: Engine) -> None:
    engine.add("backup", "1 12 * * *")
    engine.runtime.auto_exit = None
    engine.run_until(T0 + minutes(2))
    (launch,) = engine.runtime.launches
    run_id = engine.store.conn.execute("SELECT run_id FROM occurrences").fetchone()[0]
    assert engine.operator.mark_seen(run_id) is False
    engine.runtime.finish(launch, 1)
    engine.run_until(T0 + minutes(3))
    assert overview(engine.store, engine.clock.now_utc()).counts.failed_unseen == 1


def test_mark_seen_is_not_audited(engine: Engine) -> None:
    failing(engine)
    engine.run_until(T0 + minutes(2))
    before = engine.store.conn.execute("SELECT count(*) FROM audit_log").fetchone()[0]
    engine.operator.mark_all_seen()
    assert engine.store.conn.execute("SELECT count(*) FROM audit_log").fetchone()[0] == before


def test_the_unseen_count_reads_its_partial_index(engine: Engine) -> None:
    plan = " ".join(
        str(row[-1])
        for row in engine.store.conn.execute(
            "EXPLAIN QUERY PLAN SELECT count(*) FROM occurrences WHERE seen_at IS NULL "
            "AND (disposition = 'failed' OR disposition = 'timed_out')"
        )
    )
    assert "occurrences_unseen" in plan


def test_quarantined_and_broken_routines_are_counted_as_errors(engine: Engine) -> None:
    engine.add("sync", "@hourly")
    engine.operator.quarantine("sync", "by hand")
    shown = overview(engine.store, engine.clock.now_utc())
    assert shown.state is TrayState.ERROR and shown.counts.quarantined == 1


def test_runs_in_flight_are_counted(engine: Engine) -> None:
    failing(engine)
    engine.add("long", "1 12 * * *")
    engine.runtime.auto_exit = None
    engine.run_until(T0 + minutes(2))
    shown = overview(engine.store, engine.clock.now_utc())
    assert shown.counts.running == 2 and shown.state is TrayState.RUNNING


def test_no_next_run_while_all_scheduling_is_paused(engine: Engine) -> None:
    engine.add("backup", "30 14 * * *")
    engine.run_until(T0)
    assert overview(engine.store, T0).next_run == ("backup", T0.replace(hour=14, minute=30))
    engine.operator.pause_all("travelling")
    shown = overview(engine.store, T0)
    assert shown.next_run is None and shown.state is TrayState.PAUSED


def test_the_tooltip_counts_then_names_the_next_run(engine: Engine) -> None:
    failing(engine, "report")
    engine.add("backup", "30 14 * * *")
    engine.add("sync", "@hourly")
    engine.operator.quarantine("sync", "by hand")
    engine.run_until(T0 + minutes(2))
    text = tooltip(overview(engine.store, T0), T0, "en_US", UTC)
    assert text == "1 failed · 1 quarantined; next: backup at 2:30\u202fPM"


def test_the_tooltip_says_tomorrow_in_the_persons_zone_and_nothing_while_paused(
    engine: Engine,
) -> None:
    engine.add("backup", "30 2 * * *", tz="Europe/Berlin")
    engine.run_until(T0)
    berlin = ZoneInfo("Europe/Berlin")
    assert tooltip(overview(engine.store, T0), T0, "en_US", berlin) == (
        "Idle; next: backup tomorrow at 2:30\u202fAM"
    )
    engine.operator.pause_all()
    assert tooltip(overview(engine.store, T0), T0, "en_US", berlin) == (
        "all scheduling paused; nothing scheduled"
    )
