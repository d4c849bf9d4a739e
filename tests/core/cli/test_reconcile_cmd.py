"""``coven reconcile RUN_ID --as succeeded|failed|retry --reason TEXT`` (issue #5, DESIGN §5).

A person decides what happened to a run nobody can know about; the decision records the
evidence it was based on, and the routine stays paused until the person resumes it.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.core.cli.conftest import Awaiting, Coven

REASON = ("--reason", "the backup is on the disk")


def digest(coven: Coven) -> str:
    (item,) = coven.json("attention")["items"]
    found: str = item["evidence_digest"]
    return found


def occurrence(coven: Coven, run_id: str) -> dict[str, Any]:
    found: dict[str, Any] = coven.json("inspect", run_id)["occurrence"]
    return found


def paused_routines(coven: Coven) -> list[str]:
    return [item["routine"] for item in coven.json("list", "--state", "paused")["items"]]


def test_succeeded_reconciles_and_keeps_the_routine_paused(
    coven: Coven, awaiting: Awaiting
) -> None:
    seen = digest(coven)
    decision = coven.json(
        "reconcile", awaiting.run_id, "--as", "succeeded", *REASON, "--evidence", seen
    )
    assert decision == {
        "run_id": awaiting.run_id, "outcome": "succeeded", "reason": REASON[1],
        "evidence_digest": seen, "routine": "backup", "routine_state": "paused",
    }  # fmt: skip
    found = occurrence(coven, awaiting.run_id)
    assert (found["disposition"], found["reconciled_as"]) == ("reconciled", "succeeded")
    assert REASON[1] in found["reason"]
    assert paused_routines(coven) == ["backup"]
    assert coven.json("attention") == {"items": [], "broken_routines": []}


def test_the_decision_reads_well(coven: Coven, awaiting: Awaiting) -> None:
    seen = digest(coven)
    status, out, err = coven("reconcile", awaiting.run_id, "--as", "failed", *REASON)
    assert (status, err) == (0, "")
    assert out.splitlines() == [
        f"Run {awaiting.run_id} reconciled as failed: {REASON[1]} (evidence {seen[:12]}).",
        "The routine backup stays paused: resume it with coven resume backup when ready.",
    ]
    assert occurrence(coven, awaiting.run_id)["reconciled_as"] == "failed"


def test_retry_after_verifying_plans_a_new_attempt(coven: Coven, awaiting: Awaiting) -> None:
    args = ("reconcile", awaiting.run_id, "--as", "retry", "--verified-no-side-effect")
    status, out, err = coven(*args, "--reason", "nothing reached the disk")
    assert (status, err) == (0, "")
    assert out.splitlines()[0].startswith(f"Run {awaiting.run_id} will get a new attempt: ")
    assert occurrence(coven, awaiting.run_id)["state"] == "planned"
    assert paused_routines(coven) == ["backup"]
    assert coven.json("attention") == {"items": [], "broken_routines": []}


def test_the_routine_resumes_once_decided(coven: Coven, awaiting: Awaiting) -> None:
    coven.refuses("resume", "backup", message="awaits your decision")
    coven.json("reconcile", awaiting.run_id, "--as", "succeeded", *REASON)
    assert coven.json("resume", "backup")["state"] == "active"


# -- refused: exit status 2 or 3, one line, nothing stored ----------------------------------
def test_retry_without_verifying_is_refused(coven: Coven, awaiting: Awaiting) -> None:
    coven.refuses("reconcile", awaiting.run_id, "--as", "retry", *REASON,
                  message="retry only after you verified it had no side effect "
                  "(--verified-no-side-effect)")  # fmt: skip


def test_evidence_that_changed_since_it_was_shown_is_a_conflict(
    coven: Coven, awaiting: Awaiting
) -> None:
    coven.refuses("reconcile", awaiting.run_id, "--as", "failed", *REASON, "--evidence", "0" * 64,
                  status=3, message="changed since it was shown; look again")  # fmt: skip


def test_a_refused_decision_is_on_record(coven: Coven, awaiting: Awaiting) -> None:
    coven("reconcile", awaiting.run_id, "--as", "failed", *REASON, "--evidence", "0" * 64)
    newest = coven.json("audit", "--limit", "1")["entries"][0]
    assert (newest["action"], newest["target"]) == ("reconcile.failed", awaiting.run_id)
    assert newest["result"].startswith("refused: ")


def test_a_run_already_decided_is_a_conflict(coven: Coven, awaiting: Awaiting) -> None:
    coven.json("reconcile", awaiting.run_id, "--as", "failed", *REASON)
    coven.refuses("reconcile", awaiting.run_id, "--as", "succeeded", *REASON, status=3,
                  message=f"run {awaiting.run_id} is reconciled, not awaiting a decision")  # fmt: skip


def test_a_run_that_ended_is_not_awaiting(coven: Coven) -> None:
    coven.add("backup", "--schedule", "0 0 1 1 *", "--tz", "UTC")
    run_id = coven.json("run-now", "backup")["run_id"]
    coven.json("cancel", run_id)
    coven.refuses("reconcile", run_id, "--as", "failed", *REASON, status=3,
                  message=f"run {run_id} is cancelled, not awaiting a decision")  # fmt: skip


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run0", "--as", "failed", *REASON], "no run 'run0' (see: coven attention)"),
        (["RUN", "--as", "failed"], "the following arguments are required: --reason"),
        (["RUN", "--as", "failed", "--reason", ""], "a reconciliation needs a reason"),
        (["RUN", "--as", "failed", "--reason", "  "], "a reconciliation needs a reason"),
        (["RUN", *REASON], "the following arguments are required: --as"),
        (["RUN", "--as", "maybe", *REASON], "argument --as: invalid choice: 'maybe'"),
        (["--as", "failed", *REASON], "the following arguments are required: RUN_ID"),
        (["RUN", "--as", "failed", *REASON, "--verified-no-side-effect"],
         "--verified-no-side-effect goes only with --as retry"),
        (["RUN", "--as", "failed", *REASON, "--evidence", "abc123abc123"],
         "'abc123abc123' is not a full evidence digest (64 hex digits"),
    ],
)  # fmt: skip
def test_bad_input_exits_2_and_changes_nothing(
    coven: Coven, awaiting: Awaiting, args: list[str], message: str
) -> None:
    args = [awaiting.run_id if arg == "RUN" else arg for arg in args]
    coven.refuses("reconcile", *args, message=message)
    assert coven.json("attention")["items"][0]["run_id"] == awaiting.run_id
