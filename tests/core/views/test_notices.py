"""Notifications a person can act on, rate-limited, and one summary after a wake (issue #21.2)."""

from __future__ import annotations

from datetime import timedelta

from coven_core import events
from coven_core.clock import WakeReason
from coven_core.events import EventKind
from coven_core.notation.reasons import reason_text
from coven_core.views.notices import Notice, NoticeKind, notice, throttle, wake_summary
from tests.core.conftest import T0, Engine, after_a_dead_leader, minutes


def all_events(engine: Engine, after: int = 0) -> list[events.Event]:
    return events.since(engine.store.conn, after)


def test_a_failed_run_names_the_routine_the_exit_and_the_last_stderr_line(
    engine: Engine, tmp_path
) -> None:
    engine.add("backup", "1 12 * * *")
    engine.runtime.auto_exit = None
    engine.run_until(T0 + minutes(2))
    (tmp_path / "stderr").write_text("sending files\nrsync: connection refused\n\n")
    engine.store.conn.execute("UPDATE attempts SET attempt_dir = ?", (str(tmp_path),))
    engine.runtime.finish(engine.runtime.launches[0], 1)
    engine.run_until(T0 + minutes(3))
    settled = [e for e in all_events(engine) if e.kind is EventKind.SETTLED]
    told = notice(engine.store, settled[-1], "en_US")
    run_id = engine.store.conn.execute("SELECT run_id FROM occurrences").fetchone()[0]
    assert told == Notice(NoticeKind.FAILED, "backup failed", "exit 1: rsync: connection refused",
                          "backup", run_id, settled[-1].seq)  # fmt: skip


def test_a_success_is_not_worth_a_notice_and_a_quarantine_is(engine: Engine) -> None:
    engine.add("sync", "1 12 * * *", quarantine_after=1)
    engine.run_until(T0 + minutes(2))
    (ok,) = [e for e in all_events(engine) if e.kind is EventKind.SETTLED]
    assert notice(engine.store, ok) is None
    engine.operator.quarantine("sync", "by hand")
    (held,) = [e for e in all_events(engine) if e.kind is EventKind.QUARANTINED]
    told = notice(engine.store, held, "en_US")
    assert told is not None and (told.kind, told.title, told.body) == (
        NoticeKind.QUARANTINED, "sync quarantined", "by hand",
    )  # fmt: skip


def failure(n: int) -> Notice:
    return Notice(NoticeKind.FAILED, f"r{n} failed", "exit 1", f"r{n}", f"run{n}", n)


def test_a_storm_shows_a_few_and_folds_the_rest_into_one() -> None:
    pending = [failure(n) for n in range(6)]
    shown, held = throttle(pending, [], T0)
    assert [n.title for n in shown] == ["r0 failed", "r1 failed", "4 more runs failed"]
    assert shown[-1].kind is NoticeKind.FOLDED and shown[-1].body == "r2, r3, r4, r5"
    assert held == []


def test_a_full_window_holds_notices_until_it_has_room() -> None:
    recent = [T0 - timedelta(seconds=s) for s in (5, 10, 15)]
    assert throttle([failure(1)], recent, T0) == ([], [failure(1)])
    assert throttle([failure(1)], recent, T0 + timedelta(minutes=2)) == ([failure(1)], [])


def test_a_kind_turned_off_is_dropped() -> None:
    quiet = frozenset({NoticeKind.FAILED})
    assert throttle([failure(1)], [], T0, off=quiet) == ([], [])


def test_after_a_sleep_one_summary_says_what_was_missed_and_when_the_latest_ran(
    engine: Engine,
) -> None:
    engine.add("backup", "*/5 * * * *")
    engine.run_until(T0 + minutes(2))
    before = all_events(engine)[-1].seq
    assert wake_summary(engine.store, before) is None  # nothing slept yet
    engine.clock.suspend(timedelta(hours=3), notify=False)
    engine.wake.set(WakeReason.SYSTEM_RESUMED)
    engine.run_until(T0 + timedelta(hours=3, minutes=3))
    summary = wake_summary(engine.store, before, "en_US")
    assert summary is not None and summary.kind is NoticeKind.WAKE
    assert summary.text == (
        "While asleep: 35 moments of backup missed; the latest ran at 3:02\u202fPM"
    )


def test_what_the_engine_wrote_down_reads_in_the_notices_language(tmp_path, clock) -> None:  # type: ignore[no-untyped-def]
    """Seen on X: a German title over the engine's English reason ("ambiguous: the runner is
    gone …"), one notification in two languages."""
    new, _ = after_a_dead_leader(tmp_path / "d", clock, "backup")
    new.run_until(clock.now_utc())
    (waiting,) = [e for e in all_events(new) if e.data.get("disposition") == "recovery_required"]
    english, german = (notice(new.store, waiting, locale) for locale in ("en_US", "de_DE"))
    assert english is not None and german is not None
    assert english.body.startswith("ambiguous: the scheduler stopped")
    assert german.title == "backup braucht Ihre Entscheidung"
    assert german.body == reason_text(english.body, "de_DE") != english.body
    assert "not retried" not in german.body


def test_a_quarantines_reason_reads_in_the_notices_language(engine: Engine) -> None:
    engine.add("sync", "1 12 * * *", quarantine_after=1)
    engine.runtime.auto_exit = 1
    engine.run_until(T0 + minutes(2))
    (held,) = [e for e in all_events(engine) if e.kind is EventKind.QUARANTINED]
    german = notice(engine.store, held, "de_DE")
    assert german is not None and german.body == reason_text(held.data["reason"], "de_DE")
    assert german.body != held.data["reason"]
