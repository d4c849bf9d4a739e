"""Every run's story (issue #21.3): the list, one run in full, its decisions in sentences."""

from __future__ import annotations

import os
from datetime import timedelta

import pytest

from coven_core.clock import WakeReason
from coven_core.runner.process import start_mark
from coven_core.scheduling.retry import RetryPolicy, backoff
from coven_core.store.codec import instant_from
from coven_core.views.runs import DETAIL_TAIL_BYTES, RUNNER_LOST, run_detail, runs
from coven_core.views.story import Step, clock_time, step_sentence
from tests.core.conftest import T0, Engine, make_engine, minutes


def test_a_retried_failure_tells_each_attempt_and_each_retry(engine: Engine) -> None:
    engine.add("backup", "1 12 * * *", retries=2, quarantine_after=9)
    engine.runtime.auto_exit = 1
    engine.run_until(T0 + minutes(30))
    (row,) = runs(engine.store, "backup")
    assert (row.outcome, row.reason, row.attempts, row.exit_code) == (
        "failed", "Failed with exit 1", 3, 1,
    )  # fmt: skip
    assert row.seen is False and row.dst is None
    detail = run_detail(engine.store, row.run_id or "")
    # Its duration is its commands' time, each attempt's summed; the retries' waits are not.
    ran = [(a.exited_at - a.started_at).total_seconds() for a in detail.attempts
           if a.started_at and a.exited_at]  # fmt: skip
    first, last = detail.attempts[0].started_at, detail.attempts[-1].exited_at
    assert first and last and len(ran) == 3 and row.running_since is None
    assert row.duration_seconds == pytest.approx(sum(ran), abs=0.01)
    # The old figure, first start to last end, also held each retry's backoff. The backoffs
    # are drawn from the occurrence id (full jitter), so the test names them, not a constant.
    policy = RetryPolicy(retries=2, idempotent=False)
    waits = sum(backoff(policy, row.occurrence_id, n).total_seconds() for n in (1, 2))
    assert (last - first).total_seconds() >= sum(ran) + waits - 0.01
    assert [a.number for a in detail.attempts] == [1, 2, 3]
    assert detail.command == "/bin/true"
    retried = [d for d in detail.decisions if d.startswith("Failed (action_failed); retried at")]
    assert len(retried) == 2 and retried[0].endswith("(attempt 2 of 3)")
    assert detail.decisions[-1].startswith("Failed: action_failed: exited with status 1")


def test_a_run_waiting_for_its_retry_says_how_it_failed_and_when_it_tries_again(
    engine: Engine,
) -> None:
    """Not only "Waiting to run": when it tries again, and how its first attempt failed."""
    engine.add("backup", "1 12 * * *", retries=2, quarantine_after=9)
    engine.runtime.auto_exit = 1
    engine.run_until(T0 + minutes(1))  # attempt 1 failed at once; its retry waits out a backoff
    (row,) = runs(engine.store, "backup", locale="en")
    (german,) = runs(engine.store, "backup", locale="de")
    retry = instant_from(
        engine.store.conn.execute("SELECT not_before FROM occurrences").fetchone()[0]
    )
    assert (row.outcome, row.attempts, row.running_since) == ("waiting", 1, None)
    later = runs(engine.store, "backup", now=T0 + minutes(30))[0]  # its duration does not tick
    assert later.duration_seconds == row.duration_seconds is not None
    assert row.reason == f"Tries again at {clock_time(retry, 'UTC', 'en')}: Failed with exit 1"
    assert german.reason == (
        f"Neuer Versuch um {clock_time(retry, 'UTC', 'de')}: Fehlgeschlagen mit Exit-Code 1"
    )
    told = run_detail(engine.store, row.run_id or "", locale="de").decisions
    assert told[-1].startswith("Fehlgeschlagen (Befehl fehlgeschlagen); erneut um ")


def test_a_running_run_shows_its_elapsed_time(engine: Engine) -> None:
    engine.add("sync", "1 12 * * *")
    engine.runtime.auto_exit = None
    engine.run_until(T0 + minutes(2))
    (row,) = runs(engine.store, now=T0 + minutes(5))
    assert (row.outcome, row.reason, row.duration_seconds) == ("running", "Running", 240.0)
    assert row.running_since == row.started_at


def test_a_running_run_whose_runner_is_gone_says_nothing_supervises_it(engine: Engine) -> None:
    """An idempotent routine's command is watched after its runner was lost (DESIGN §8): its
    row says so, from the runner's pid and start mark (here this process's pid, once with its
    own mark, once with another's: a reused pid)."""
    engine.add("mirror", "1 12 * * *")
    engine.runtime.auto_exit = None
    engine.run_until(T0 + minutes(2))
    me, mark = os.getpid(), start_mark(os.getpid())
    for runner_mark, words in ((mark, "Running"), (mark - 60, RUNNER_LOST)):
        with engine.store.write() as conn:
            conn.execute("UPDATE attempts SET runner_pid = ?, runner_start = ?", (me, runner_mark))
        (row,) = runs(engine.store, now=T0 + minutes(5))
        assert (row.outcome, row.reason) == ("running", words)
    (german,) = runs(engine.store, now=T0 + minutes(5), locale="de")
    assert german.reason.startswith("Läuft ohne seinen Runner")


def test_a_cancel_by_a_person_names_them_and_their_reason(engine: Engine) -> None:
    engine.add("sync", "1 12 * * *")
    engine.runtime.auto_exit = None
    engine.run_until(T0 + minutes(2))
    (launch,) = engine.runtime.launches
    run_id = runs(engine.store)[0].run_id or ""
    engine.operator.cancel(run_id, "wrong disk")
    engine.runtime.finish(launch, -15, cancelled=True)
    engine.run_until(T0 + minutes(3))
    (row,) = runs(engine.store, "sync")
    assert row.outcome == "cancelled"
    assert row.reason.startswith("Cancelled by a person (") and row.reason.endswith(": wrong disk")
    # Its story's last step says it once (seen on X: "Cancelled: cancelled: cancelled; not
    # retried: it was stopped"); the request before it names the person and the reason.
    who = row.reason.partition("(")[2].partition(")")[0]
    story = run_detail(engine.store, run_id).decisions
    assert story[-2:] == [f"Cancel requested by {who}: wrong disk", "Cancelled"]


@pytest.mark.parametrize(
    ("reason", "english", "german"),
    [
        ("cancelled: cancelled; not retried: it was stopped", "Cancelled", "Abgebrochen"),
        (
            "cancelled: stopped from outside Coven (SIGTERM to its runner); "
            "not retried: it was stopped",
            "Cancelled: stopped from outside Coven (SIGTERM to its runner)",
            "Abgebrochen: von außerhalb von Coven angehalten (SIGTERM an ihren Runner)",
        ),
    ],
)
def test_a_cancelled_step_says_what_cancelled_does_not(
    reason: str, english: str, german: str
) -> None:
    step = Step(T0, "settled", {"disposition": "cancelled", "reason": reason})
    assert [step_sentence(step, "UTC", locale=x) for x in ("en_US", "de_DE")] == [english, german]


def test_missed_moments_say_how_many_why_and_when_the_latest_ran(engine: Engine) -> None:
    engine.add("every5", "*/5 * * * *")
    engine.run_until(T0 + minutes(2))
    engine.clock.suspend(timedelta(hours=3), notify=False)
    engine.wake.set(WakeReason.SYSTEM_RESUMED)
    engine.run_until(T0 + timedelta(hours=3, minutes=3))
    latest, missed, first = runs(engine.store, "every5")
    assert missed.kind == "coalesced" and missed.reason == "Missed 35 moments while asleep"
    assert run_detail(engine.store, missed.occurrence_id).decisions == [
        "Missed 35 moments while asleep; the latest ran at 3:02\u202fPM"
    ]
    older = runs(engine.store, "every5", before=missed.planned_utc)
    assert [r.occurrence_id for r in older] == [first.occurrence_id]
    assert runs(engine.store, limit=1) == [latest]


def test_a_daylight_saving_gap_is_told_as_such(engine: Engine) -> None:
    engine.add("early", "30 2 * * *", tz="Europe/Berlin")
    engine.run_until(T0 + timedelta(days=29))  # 2026-03-29: 02:30 does not exist in Berlin
    gap = [r for r in runs(engine.store, "early", limit=100) if r.dst == "gap"]
    assert len(gap) == 1 and gap[0].reason.startswith("Skipped: this wall time does not exist")
    assert "does not exist in Europe/Berlin" in (
        run_detail(engine.store, gap[0].occurrence_id).dst_note or ""
    )


def test_the_detail_carries_the_output_tails_and_their_files(engine: Engine, tmp_path) -> None:
    engine.add("talk", "1 12 * * *")
    engine.run_until(T0 + minutes(2))
    (row,) = runs(engine.store)
    (tmp_path / "stdout").write_bytes(b"x" * (DETAIL_TAIL_BYTES + 10) + b"\nend\n")
    (tmp_path / "stderr").write_text("warning: slow\n")
    engine.store.conn.execute("UPDATE attempts SET attempt_dir = ?", (str(tmp_path),))
    detail = run_detail(engine.store, row.occurrence_id)
    assert detail.stdout.truncated and detail.stdout.text.endswith("end\n")
    assert len(detail.stdout.text.encode()) == DETAIL_TAIL_BYTES
    assert detail.stderr == type(detail.stderr)(str(tmp_path / "stderr"), "warning: slow\n", False)
    assert detail.to_json()["row"]["outcome"] == "succeeded"


def test_paging_back_from_a_row_keeps_the_rows_planned_for_the_same_instant(
    engine: Engine,
) -> None:
    for name in ("alpha", "beta", "gamma"):
        engine.add(name, "1 12 * * *")
    engine.run_until(T0 + minutes(2))
    first = runs(engine.store, limit=2)
    rest = runs(engine.store, limit=2, before=first[-1])
    names = [row.routine for row in first + rest]
    assert sorted(names) == ["alpha", "beta", "gamma"]  # none lost at the page's edge


def test_the_sentences_follow_the_locale_asked_for(engine: Engine) -> None:
    engine.add("early", "30 2 * * *", tz="Europe/Berlin", retries=1, quarantine_after=9)
    engine.runtime.auto_exit = 1
    engine.run_until(T0 + timedelta(days=1))
    row = runs(engine.store, "early")[0]
    english = run_detail(engine.store, row.occurrence_id, locale="en_US").decisions
    german = run_detail(engine.store, row.occurrence_id, locale="de_DE").decisions
    retried = next(i for i, line in enumerate(english) if "retried at" in line)
    assert " AM " in english[retried].replace("\u202f", " ")  # 12-hour in en_US…
    assert "AM" not in german[retried]  # …24-hour in German


def test_a_retry_that_runs_counts_its_own_time_not_the_first_attempts(engine: Engine) -> None:
    engine.add("backup", "1 12 * * *", retries=1, quarantine_after=9)
    engine.runtime.auto_exit = None
    engine.run_until(T0 + minutes(1))
    # The first attempt fails by hand: its retry's jitter may be under a second, so a runtime
    # that fails every launch until a later instant could fail the retry too.
    engine.runtime.finish(engine.runtime.launches[0], 1)
    engine.run_until(T0 + minutes(10))  # its retry runs on
    (row,) = runs(engine.store, now=T0 + minutes(12))
    first, second = run_detail(engine.store, row.occurrence_id).attempts
    assert row.outcome == "running" and second.started_at and first.started_at
    assert second.started_at > first.started_at and row.started_at == first.started_at
    assert row.running_since == second.started_at
    assert row.duration_seconds == (T0 + minutes(12) - second.started_at).total_seconds()


def test_a_failure_says_its_commands_last_word_on_stderr_and_a_silent_one_only_its_exit(
    engine: Engine, tmp_path
) -> None:
    engine.add("backup", "1 12 * * *")
    engine.add("sync", "2 12 * * *")
    engine.runtime.auto_exit = 1
    engine.run_until(T0 + minutes(3))
    (tmp_path / "stderr").write_text("sending files\nrsync: connection refused\n\n")
    engine.store.conn.execute(
        "UPDATE attempts SET attempt_dir = ? WHERE occurrence_id IN (SELECT o.id FROM "
        "occurrences o JOIN routines r ON r.id = o.routine_id WHERE r.name = 'backup')",
        (str(tmp_path),),
    )
    said = {row.routine: (row.reason, row.last_error) for row in runs(engine.store)}
    assert said == {"backup": ("Failed with exit 1: rsync: connection refused",
                               "rsync: connection refused"),
                    "sync": ("Failed with exit 1", None)}  # fmt: skip
    german = {row.routine: row.reason for row in runs(engine.store, locale="de_DE")}
    assert german["backup"] == "Fehlgeschlagen mit Exit-Code 1: rsync: connection refused"


def test_a_run_caught_up_after_the_app_was_off_says_why_it_started_late(tmp_path, clock) -> None:  # type: ignore[no-untyped-def]
    """Planned for 12:30, started at 15:12: the row says why (``caught_up``, in JSON too)
    and so does its story, in the reader's language."""
    first = make_engine(tmp_path / "d", clock)
    first.add("daily", "30 12 * * *")
    first.add("every5", "*/5 * * * *")
    first.run_until(T0 + minutes(12))
    first.store.close()  # the app quits before 12:30
    clock.advance(timedelta(hours=3))
    again = make_engine(tmp_path / "d", clock)
    again.run_until(clock.now_utc() + minutes(1))
    (ran,) = runs(again.store, "daily")
    assert (ran.outcome, ran.caught_up, ran.to_json()["caught_up"]) == (
        "succeeded", "app_not_running", "app_not_running",
    )  # fmt: skip
    windows = [row for row in runs(again.store, "every5") if row.outcome == "skipped"]
    assert windows and all(row.caught_up is None for row in windows)  # their cause is theirs
    story = run_detail(again.store, ran.run_id or "").decisions
    assert "Caught up: its moment passed while Coven was not running" in story
    german = run_detail(again.store, ran.run_id or "", locale="de").decisions
    assert not any(line.startswith("Caught up") for line in german)
    again.store.close()


@pytest.mark.parametrize(
    ("reason", "english", "german"),
    [
        (
            "timed_out: stopped after its timeout; not retried: it ran past its timeout",
            "Timed out",
            "Zeitlimit überschritten",
        ),
        ("the runner timed out in a way of its own", "Timed out: the runner timed out in a "
         "way of its own", "Zeitlimit überschritten: the runner timed out in a way of its own"),
    ],
)  # fmt: skip
def test_a_timed_out_run_says_it_once(reason: str, english: str, german: str) -> None:
    """Seen on the Runs page: "Timed out: timed_out: stopped after its timeout; not retried:
    it ran past its timeout". A reason in another form is kept whole."""
    step = Step(T0, "settled", {"disposition": "timed_out", "reason": reason})
    assert [step_sentence(step, "UTC", locale=x) for x in ("en_US", "de_DE")] == [english, german]
