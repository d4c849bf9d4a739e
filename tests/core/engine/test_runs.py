"""Retries, quarantine, manual runs, cancellation and recovery under virtual time (issue #4)."""

from __future__ import annotations

from datetime import timedelta

import pytest

from coven_core.clock import WakeReason
from coven_core.errors import Conflict, ValidationError
from coven_core.model import FailureClass
from coven_core.runner.process import boot_id
from coven_core.runtime.base import LaunchError
from coven_core.scheduling.retry import RetryPolicy, backoff
from tests.core.conftest import T0, Engine, after_a_dead_leader, minutes


def occurrence_rows(engine: Engine, rid: str) -> list[tuple]:
    return list(engine.store.conn.execute(
        "SELECT kind, state, disposition, reason FROM occurrences WHERE routine_id = ? "
        "ORDER BY scheduled_utc, id", (rid,)))  # fmt: skip


def attempts(engine: Engine, occurrence_like: str = "%") -> list[tuple]:
    return list(engine.store.conn.execute(
        "SELECT number, failure_class, not_before, race_note FROM attempts "
        "WHERE occurrence_id LIKE ? ORDER BY occurrence_id, number", (occurrence_like,)))  # fmt: skip


def state_of(engine: Engine, name: str) -> tuple:
    return engine.store.conn.execute(
        "SELECT state, state_reason, consecutive_failures FROM routines WHERE name = ?", (name,)
    ).fetchone()


def test_failed_attempts_retry_with_deterministic_backoff_then_exhaust(engine: Engine) -> None:
    engine.runtime.auto_exit = 1
    rid = engine.add("flaky", "0 13 * * *", retries=2)
    engine.run_until(T0 + timedelta(hours=3))
    rows = attempts(engine)
    assert [(n, c) for n, c, _, _ in rows] == [
        (1, "action_failed"),
        (2, "action_failed"),
        (3, "action_failed"),
    ]
    occurrence = f"{rid}@20260301T130000Z"
    first_wait = backoff(RetryPolicy(2, False), occurrence, 1)
    assert rows[0][2] == (T0 + timedelta(hours=1) + first_wait).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    assert occurrence_rows(engine, rid) == [
        ("scheduled", "settled", "failed",
         "action_failed: exited with status 1; retries exhausted after 3 attempt(s)"),
    ]  # fmt: skip


def test_three_failed_occurrences_quarantine_the_routine(engine: Engine) -> None:
    engine.runtime.auto_exit = 1
    rid = engine.add("broken", "*/10 * * * *")
    engine.run_until(T0 + minutes(45))
    assert state_of(engine, "broken") == ("quarantined", "3 consecutive failed occurrences", 3)
    assert len(occurrence_rows(engine, rid)) == 3  # nothing planned while quarantined
    engine.runtime.auto_exit = 0
    ref = engine.operator.probe("broken")
    engine.run_until(engine.clock.now_utc())
    assert occurrence_rows(engine, rid)[-1][:3] == ("manual", "settled", "succeeded")
    assert state_of(engine, "broken")[0] == "quarantined"  # a probe never releases
    assert engine.operator.release("broken") == 2  # 12:30 and 12:40 passed while quarantined
    assert state_of(engine, "broken") == ("active", None, 0)
    del ref


def test_a_success_resets_the_failure_count(engine: Engine) -> None:
    engine.runtime.auto_exit = 1
    engine.add("r", "*/10 * * * *")
    engine.run_until(T0 + minutes(15))
    engine.runtime.auto_exit = 0
    engine.run_until(T0 + minutes(25))
    assert state_of(engine, "r") == ("active", None, 0)


def test_run_now_is_idempotent_per_key(engine: Engine) -> None:
    engine.add("a", "@yearly")
    engine.add("b", "@yearly")
    first = engine.operator.run_now("a", key="k1")
    assert engine.operator.run_now("a", key="k1") == first
    with pytest.raises(Conflict, match="key 'k1' was already used for another routine"):
        engine.operator.run_now("b", key="k1")
    engine.run_until(T0 + minutes(1))
    assert engine.operator.run_now("a", key="k1").disposition == "succeeded"
    assert len(engine.runtime.launches) == 1


def test_run_now_joining_the_waiting_run_makes_no_second_one(engine: Engine) -> None:
    """A window's Run now clicked twice before the run starts: one run. Without joining
    (the CLI) each call is a new run, as before; once it has run, a click makes a new one."""
    engine.add("a", "@yearly")
    first = engine.operator.run_now("a", join_waiting=True)
    again = engine.operator.run_now("a", join_waiting=True)
    assert (again.run_id, again.already_waiting, first.already_waiting) == (
        first.run_id,
        True,
        False,
    )
    assert engine.operator.run_now("a").run_id != first.run_id  # not joining: a second run
    engine.run_until(T0 + minutes(1))
    later = engine.operator.run_now("a", join_waiting=True)
    assert later.run_id != first.run_id and not later.already_waiting
    assert len(engine.runtime.launches) == 2


def test_run_now_runs_a_paused_routine_but_not_a_quarantined_one(engine: Engine) -> None:
    rid = engine.add("a", "@yearly")
    engine.operator.pause("a")
    engine.operator.run_now("a")
    engine.run_until(T0 + minutes(1))
    assert occurrence_rows(engine, rid)[-1][2] == "succeeded"
    engine.operator.resume("a")
    engine.operator.quarantine("a", "by hand")
    with pytest.raises(ValidationError, match=r"is quarantined .* 'coven probe a'"):
        engine.operator.run_now("a")


def test_cancel_reaches_the_runtime_and_ends_cancelled(engine: Engine) -> None:
    engine.runtime.auto_exit = None
    rid = engine.add("slow", "@hourly")
    engine.run_until(T0 + minutes(1))
    (launch,) = engine.runtime.running.values()
    run_id = occurrence_run_id(engine, rid)
    engine.operator.cancel(run_id, "wrong disk")
    engine.run_until(engine.clock.now_utc())
    assert engine.runtime.cancels == [launch.attempt_id]
    engine.runtime.finish(launch, code=-15, cancelled=True)
    engine.run_until(engine.clock.now_utc())
    assert occurrence_rows(engine, rid)[0][2] == "cancelled"
    assert attempts(engine)[0][1] == "cancelled"


def test_completion_beats_a_late_cancel_and_the_loser_is_recorded(engine: Engine) -> None:
    engine.runtime.auto_exit = None
    rid = engine.add("slow", "@hourly")
    engine.run_until(T0 + minutes(1))
    (launch,) = engine.runtime.running.values()
    engine.operator.cancel(occurrence_run_id(engine, rid))
    engine.runtime.finish(launch, code=0)  # it exits exactly as the cancel arrives
    engine.run_until(engine.clock.now_utc())
    assert occurrence_rows(engine, rid)[0][2] == "succeeded"
    assert attempts(engine)[0][3] == "cancel arrived after completion"


def test_cancel_before_start_and_after_end(engine: Engine) -> None:
    rid = engine.add("a", "@yearly")
    ref = engine.operator.run_now("a")
    assert engine.operator.cancel(ref.run_id).disposition == "cancelled"
    engine.run_until(T0 + minutes(1))
    assert engine.runtime.launches == []
    again = engine.operator.cancel(ref.run_id)  # idempotent: the outcome, unchanged
    assert (again.disposition, again.already_ended) == ("cancelled", True)
    del rid


def test_retry_command_gives_a_failed_run_a_new_attempt(engine: Engine) -> None:
    engine.runtime.auto_exit = 3
    rid = engine.add("a", "@yearly")
    ref = engine.operator.run_now("a")
    engine.run_until(T0 + minutes(1))
    engine.runtime.auto_exit = 0
    engine.operator.retry(ref.run_id)
    engine.run_until(engine.clock.now_utc())
    assert [a[:2] for a in attempts(engine)] == [(1, "action_failed"), (2, None)]
    assert occurrence_rows(engine, rid)[0][2] == "succeeded"


def test_validation_failure_is_never_retried(engine: Engine) -> None:
    def refuse(launch):  # type: ignore[no-untyped-def]
        raise LaunchError(FailureClass.VALIDATION, "/nope: no such file")

    engine.runtime.start = refuse  # type: ignore[method-assign]
    rid = engine.add("a", "@hourly", retries=5)
    engine.run_until(T0 + minutes(1))
    assert occurrence_rows(engine, rid)[0][2:] == (
        "failed",
        "validation: /nope: no such file; not retried: the routine itself is invalid",
    )
    run = occurrence_run_id(engine, rid)
    with pytest.raises(Conflict) as refused:
        engine.operator.retry(run)
    assert str(refused.value) == (
        f"run {run} failed with a validation failure: the routine itself is invalid, so another "
        "attempt would fail the same way: fix the routine, then start a new run with "
        "'coven run-now a'"
    )


@pytest.mark.parametrize(
    ("idempotent", "expected"), [(False, "recovery_required"), (True, "succeeded")]
)
def test_a_run_left_by_a_dead_leader_is_ambiguous_unless_idempotent(
    tmp_path, clock, idempotent: bool, expected: str
) -> None:
    new, rid = after_a_dead_leader(tmp_path / "d", clock, "a", idempotent=idempotent)
    new.run_until(clock.now_utc() + minutes(5))
    assert [a.state for a in new.runtime.recovered] == ["running"]
    assert occurrence_rows(new, rid)[0][2] == expected
    if not idempotent:
        with pytest.raises(Conflict, match="decide with 'coven reconcile"):
            new.operator.retry(occurrence_run_id(new, rid))


def test_an_attempt_remembers_the_boot_it_was_claimed_in(tmp_path, clock) -> None:
    """Recovery's proof that nothing ran holds only within that boot (runner.journal): it is
    on record from the claim on, whatever the runtime's start says."""
    new, _ = after_a_dead_leader(tmp_path / "d", clock, "a")
    new.run_until(clock.now_utc() + minutes(5))
    assert [a.boot_id for a in new.runtime.recovered] == [boot_id()]


def test_an_attempt_left_running_brings_its_timeout_to_recovery(tmp_path, clock) -> None:
    """A command whose runner is gone is watched until it ends (an idempotent routine's):
    its timeout, decided at the claim, must still hold, and recovery is told it."""
    new, _ = after_a_dead_leader(tmp_path / "d", clock, "a", timeout=timedelta(minutes=7))
    new.run_until(clock.now_utc() + minutes(5))
    assert [a.timeout_seconds for a in new.runtime.recovered] == [420.0]


def occurrence_run_id(engine: Engine, rid: str) -> str:
    return engine.store.conn.execute(
        "SELECT run_id FROM occurrences WHERE routine_id = ? AND run_id IS NOT NULL "
        "ORDER BY scheduled_utc LIMIT 1", (rid,)).fetchone()[0]  # fmt: skip


def test_wake_reason_run_finished_exists() -> None:
    assert WakeReason("run_finished") is WakeReason.RUN_FINISHED


def test_an_empty_key_is_refused(engine: Engine) -> None:
    engine.add("a", "@yearly")
    with pytest.raises(ValidationError, match="must not be empty"):
        engine.operator.run_now("a", key=" ")


def test_a_run_cancelled_before_it_started_can_be_retried(engine: Engine) -> None:
    engine.add("a", "@yearly")
    ref = engine.operator.run_now("a")
    engine.operator.cancel(ref.run_id)
    assert engine.operator.retry(ref.run_id).state == "planned"


def test_cancel_while_waiting_to_retry_says_so(engine: Engine) -> None:
    engine.runtime.auto_exit = 1
    rid = engine.add("a", "@yearly", retries=2)
    ref = engine.operator.run_now("a")
    engine.run_until(T0 + timedelta(seconds=1))
    engine.operator.cancel(ref.run_id)
    assert occurrence_rows(engine, rid)[0][3] == "cancelled while waiting to retry"


def test_a_refused_retry_names_the_true_reason(engine: Engine) -> None:
    engine.runtime.auto_exit = 1
    engine.add("a", "@yearly", retries=2)
    waiting = engine.operator.run_now("a", key="fails")
    engine.run_until(T0 + timedelta(seconds=1))  # attempt 1 failed; attempt 2 waits
    with pytest.raises(
        Conflict, match=f"^run {waiting.run_id} already waits for its next attempt$"
    ):
        engine.operator.retry(waiting.run_id)
    engine.operator.cancel(waiting.run_id)
    engine.runtime.auto_exit = 0
    done = engine.operator.run_now("a", key="succeeds")
    engine.run_until(engine.clock.now_utc())
    with pytest.raises(
        Conflict, match=rf"^run {done.run_id} already ended \(succeeded\): only a failed, "
    ):
        engine.operator.retry(done.run_id)


def test_a_paused_routine_cannot_be_quarantined_by_hand(engine: Engine) -> None:
    engine.add("a", "@yearly")
    engine.operator.pause("a", "holiday")
    with pytest.raises(ValidationError, match="only an active routine can be quarantined"):
        engine.operator.quarantine("a")
