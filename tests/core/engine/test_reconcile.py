"""Reconciliation with evidence (issue #5): what a person decides about an unknowable run."""

from __future__ import annotations

import pytest

from coven_core.errors import Conflict, ValidationError
from coven_core.operations.reconcile import Outcome
from coven_core.operations.runs import operator_name
from coven_core.queries import runs
from coven_core.views.attention import attention
from coven_core.views.story import tried
from tests.core.conftest import Engine, after_a_dead_leader, minutes


@pytest.fixture
def awaiting(tmp_path, clock) -> tuple[Engine, str, str]:
    """A run left running by a dead leader: ambiguous, so it waits for a person."""
    new, rid = after_a_dead_leader(tmp_path / "d", clock, "backup")
    new.run_until(clock.now_utc())
    run_id = new.store.conn.execute("SELECT run_id FROM occurrences").fetchone()[0]
    return new, rid, run_id


def routine_state(engine: Engine) -> tuple:
    return engine.store.conn.execute("SELECT state, state_reason FROM routines").fetchone()


def test_attention_lists_the_run_with_its_evidence(awaiting) -> None:
    engine, _, run_id = awaiting
    (item,) = attention(engine.store, engine.clock.now_utc())
    assert (item.kind, item.run_id, item.routine) == ("recovery_required", run_id, "backup")
    assert item.attempts[0].failure_class == "ambiguous"
    assert any("claimed" in step for step in item.tried)
    assert len(item.digest()) == 64


def test_a_run_whose_end_no_one_saw_has_no_duration(awaiting) -> None:
    """Its attempt was closed when recovery found the runner gone: that moment is not when
    the command ended, so the run shows no duration rather than an unproven one."""
    engine, _, _ = awaiting
    (row,) = runs(engine.store, locale="en")
    assert row.outcome == "recovery_required" and row.attempts == 1
    assert row.duration_seconds is None


def test_the_routine_waits_for_the_decision(awaiting) -> None:
    engine, _, run_id = awaiting
    assert routine_state(engine) == (
        "paused",
        f"run {run_id} needs your decision (coven attention)",
    )
    with pytest.raises(ValidationError, match=f"run {run_id} awaits your decision"):
        engine.operator.resume("backup")
    with pytest.raises(ValidationError, match="awaits your decision"):
        engine.operator.run_now("backup")


def test_reconcile_as_succeeded_records_the_evidence_and_keeps_it_paused(awaiting) -> None:
    engine, _, run_id = awaiting
    (item,) = attention(engine.store, engine.clock.now_utc())
    decision = engine.operator.reconcile(run_id, Outcome.SUCCEEDED, "the backup is on the disk",
                                         seen_digest=item.digest())  # fmt: skip
    assert decision.evidence_digest == item.digest()
    row = engine.store.conn.execute(
        "SELECT disposition, reconciled_as, reason FROM occurrences").fetchone()  # fmt: skip
    assert row[:2] == ("reconciled", "succeeded") and "the backup is on the disk" in row[2]
    stored = engine.store.conn.execute(
        "SELECT outcome, evidence_digest FROM reconciliations").fetchone()  # fmt: skip
    assert stored == ("succeeded", item.digest())
    assert routine_state(engine)[0] == "paused"
    assert attention(engine.store, engine.clock.now_utc()) == []
    engine.operator.resume("backup")  # now it may


def test_retry_needs_the_no_side_effect_statement_and_runs_while_paused(awaiting) -> None:
    engine, rid, run_id = awaiting
    with pytest.raises(ValidationError, match="verified-no-side-effect"):
        engine.operator.reconcile(run_id, Outcome.RETRY, "it never started")
    engine.runtime.auto_exit = 0
    engine.operator.reconcile(run_id, Outcome.RETRY, "nothing on the disk",
                              verified_no_side_effect=True)  # fmt: skip
    engine.run_until(engine.clock.now_utc() + minutes(1))
    assert (
        engine.store.conn.execute("SELECT disposition FROM occurrences").fetchone()[0]
        == "succeeded"
    )
    assert routine_state(engine)[0] == "paused"
    del rid


@pytest.mark.parametrize(
    ("outcome", "locale", "note", "said"),
    [
        (Outcome.SUCCEEDED, "en", "the log ends cleanly", "Marked as succeeded by {who}: {note}"),
        (Outcome.FAILED, "en", "the log ends cleanly", "Marked as failed by {who}: {note}"),
        (Outcome.FAILED, "de", "the log ends cleanly", "Von {who} als fehlgeschlagen markiert: {note}"),
        # A note of several lines (the CLI takes any): still read back in the reader's words.
        (Outcome.FAILED, "de", "half copied\nsee the log", "Von {who} als fehlgeschlagen markiert: {note}"),
    ],
)  # fmt: skip
def test_a_decided_run_says_which_way_who_and_why_in_the_readers_words(
    awaiting, outcome, locale, note, said
) -> None:
    """Not "Decided by a person: reconciled as failed by …", English in any language."""
    engine, _, run_id = awaiting
    engine.operator.reconcile(run_id, outcome, note)
    (row,) = runs(engine.store, locale=locale)
    assert row.reason == said.format(who=operator_name(), note=note)
    with engine.store.read() as conn:
        (oid,) = conn.execute("SELECT id FROM occurrences").fetchone()
        assert tried(conn, oid, "UTC", locale)[-1] == row.reason


def test_a_retry_decision_is_a_step_of_the_story(awaiting) -> None:
    engine, _, run_id = awaiting
    engine.operator.reconcile(run_id, Outcome.RETRY, "nothing on the disk",
                              verified_no_side_effect=True)  # fmt: skip
    with engine.store.read() as conn:
        (oid,) = conn.execute("SELECT id FROM occurrences").fetchone()
        assert tried(conn, oid, "UTC", "de")[-1] == (
            "Eine Person hat entschieden, sie erneut auszuführen"
        )


@pytest.mark.parametrize(
    ("reason", "error", "message"),
    [("", ValidationError, "needs a reason"), ("x", Conflict, "not awaiting a decision")],
)
def test_bad_decisions_are_refused(awaiting, reason, error, message) -> None:
    engine, _, run_id = awaiting
    if error is Conflict:
        engine.operator.reconcile(run_id, Outcome.FAILED, "it failed")
    with pytest.raises(error, match=message):
        engine.operator.reconcile(run_id, Outcome.FAILED, reason)


def test_evidence_that_changed_since_it_was_shown_is_refused(awaiting) -> None:
    engine, _, run_id = awaiting
    with pytest.raises(Conflict, match="changed since it was shown"):
        engine.operator.reconcile(run_id, Outcome.FAILED, "x", seen_digest="0" * 64)


def test_a_refused_decision_is_said_in_the_readers_language(awaiting, monkeypatch) -> None:
    """Needs attention shows this refusal as it comes: German on a German desktop."""
    engine, _, run_id = awaiting
    monkeypatch.setenv("LC_ALL", "de_DE.UTF-8")
    with pytest.raises(Conflict, match="haben sich geändert, seit sie gezeigt wurden"):
        engine.operator.reconcile(run_id, Outcome.FAILED, "x", seen_digest="0" * 64)


def test_a_decision_on_a_deleted_routines_run_does_not_claim_it_paused(awaiting) -> None:
    engine, _, run_id = awaiting
    engine.operator.delete_routine("backup")
    decision = engine.operator.reconcile(run_id, Outcome.FAILED, "gone anyway")
    assert decision.to_json()["routine_state"] == "deleted"
