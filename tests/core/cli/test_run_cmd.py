"""``coven run-now NAME [--key KEY]``, ``coven cancel RUN_ID|--routine NAME`` and
``coven retry RUN_ID`` (DESIGN §5, §6, §7).

Runs that need a scheduler (running, failed, ambiguous) are made by the engine fixture under
virtual time on the same data directory; ``coven`` then acts on them as a person would.
"""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import timedelta
from typing import Any

import pytest

from coven_core.scheduling.lease import LEASE_TTL
from tests.core.cli.conftest import Coven, react
from tests.core.conftest import T0, Engine, make_engine, minutes

# New Year's midnight only: nothing is scheduled between the steps of a test.
YEARLY = ("--schedule", "0 0 1 1 *", "--tz", "UTC")
RUN_KEYS = {"run_id", "occurrence_id", "state"}


def manual_rows(coven: Coven, name: str) -> list[dict[str, Any]]:
    rows = coven.json("history", name)["occurrences"]
    return [row for row in rows if "@manual~" in row["occurrence_id"]]


def attempt_rows(engine: Engine, run_id: str) -> list[tuple[Any, ...]]:
    return list(engine.store.conn.execute(
        "SELECT a.number, a.failure_class, a.cancel_requested_at, a.cancel_by, a.cancel_scope, "
        "a.cancel_reason FROM attempts a JOIN occurrences o ON o.id = a.occurrence_id "
        "WHERE o.run_id = ? ORDER BY a.number", (run_id,)))  # fmt: skip


def only_run_id(coven: Coven, name: str) -> str:
    (row,) = coven.json("history", name)["occurrences"]
    run_id: str = row["run_id"]
    return run_id


def disposition(coven: Coven, name: str, run_id: str) -> str | None:
    rows = coven.json("history", name)["occurrences"]
    (row,) = [row for row in rows if row["run_id"] == run_id]
    return row["disposition"]  # type: ignore[no-any-return]


@pytest.fixture
def slow(on_engine_clock: Engine) -> Engine:
    """``slow`` (hourly) has one run that keeps running until the test ends it."""
    on_engine_clock.runtime.auto_exit = None
    on_engine_clock.add("slow", "@hourly")
    on_engine_clock.run_until(T0 + minutes(1))
    assert len(on_engine_clock.runtime.running) == 1
    return on_engine_clock


# -- run-now --------------------------------------------------------------------------------
def test_run_now_twice_with_one_key_is_one_run(coven: Coven) -> None:
    coven.add("backup", *YEARLY)
    first = coven.json("run-now", "backup", "--key", "nightly-2026-03-01")
    assert set(first) >= RUN_KEYS and first["state"] == "planned"
    assert first["run_id"].startswith("run") and "@manual~" in first["occurrence_id"]
    assert coven.json("run-now", "backup", "--key", "nightly-2026-03-01") == first
    assert [row["run_id"] for row in manual_rows(coven, "backup")] == [first["run_id"]]


def test_run_now_without_a_key_is_a_new_run_each_time(coven: Coven) -> None:
    coven.add("backup", *YEARLY)
    first, second = (coven.json("run-now", "backup")["run_id"] for _ in range(2))
    assert first != second
    assert len(manual_rows(coven, "backup")) == 2


def test_five_concurrent_callers_with_one_key_get_one_run(coven: Coven) -> None:
    coven.add("r", *YEARLY)
    argv = [sys.executable, "-m", "coven_core.cli.main", "--data-dir", str(coven.data_dir),
            "run-now", "r", "--key", "k", "--json"]  # fmt: skip
    callers = [
        subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(5)
    ]
    outputs = [caller.communicate(timeout=60) for caller in callers]
    assert [caller.returncode for caller in callers] == [0] * 5
    assert [err for _, err in outputs] == [""] * 5
    run_ids = {json.loads(out)["run_id"] for out, _ in outputs}
    assert len(run_ids) == 1
    assert [row["run_id"] for row in manual_rows(coven, "r")] == list(run_ids)


def test_a_key_reused_for_another_routine_is_a_conflict(coven: Coven) -> None:
    coven.add("backup", *YEARLY)
    coven.add("report", *YEARLY)
    run_id = coven.json("run-now", "backup", "--key", "k1")["run_id"]
    err = coven.refuses("run-now", "report", "--key", "k1", status=3,
                        message="key 'k1' was already used for another routine's run")  # fmt: skip
    assert err.startswith("coven run-now: ") and run_id in err


NO_SCHEDULER = (
    "coven run-now: no scheduler is running on this store: start coven-desktop or coven "
    "daemon; the run waits until one does\n"
)


def test_run_now_reads_well(coven: Coven, on_engine_clock: Engine) -> None:
    on_engine_clock.add("backup", "@yearly")
    on_engine_clock.run_until(T0)  # a scheduler holds the store
    status, out, err = coven("run-now", "backup", "--key", "k")
    assert (status, err) == (0, "")
    ref = coven.json("run-now", "backup", "--key", "k")
    assert out.splitlines() == [
        f"Run {ref['run_id']} of 'backup' is planned (occurrence {ref['occurrence_id']}).",
        "Follow it with: coven history backup",
    ]


def test_run_now_without_a_scheduler_says_so_and_how_to_start_one(coven: Coven) -> None:
    """Issue 19, part 3: with no scheduler on the store the run only waits; a person is told,
    on stderr, and a script by ``scheduler_running`` (the leader lease, as ``coven status``)."""
    coven.add("backup", *YEARLY)
    status, out, err = coven("run-now", "backup", "--key", "k")
    assert (status, err) == (0, NO_SCHEDULER)
    assert out.startswith("Run run")
    document = coven.json("run-now", "backup", "--key", "k")
    assert (document["scheduler_running"], document["key"]) == (False, "k")


def test_run_now_with_a_scheduler_says_nothing_more(coven: Coven, on_engine_clock: Engine) -> None:
    on_engine_clock.add("backup", "@yearly")
    on_engine_clock.run_until(T0)  # a scheduler holds the store
    assert coven.json("run-now", "backup")["scheduler_running"] is True
    on_engine_clock.scheduler.shutdown()  # an orderly shutdown releases the lease at once
    assert coven("run-now", "backup")[2] == NO_SCHEDULER


def test_run_now_prints_the_key_it_made_so_the_call_can_be_repeated(coven: Coven) -> None:
    coven.add("backup", *YEARLY)
    status, out, _err = coven("run-now", "backup")
    run_line, _follow, repeat = out.splitlines()
    prefix = "Repeat it safely (the same run again) with: coven run-now backup --key "
    assert status == 0 and repeat.startswith(prefix)
    key = repeat.removeprefix(prefix)
    again = coven.json("run-now", "backup", "--key", key)
    assert again["run_id"] in run_line and again["key"] == key
    made = coven.json("run-now", "backup")
    assert made["key"] and coven.json("run-now", "backup", "--key", made["key"]) == made


def test_run_now_of_a_finished_run_reports_how_it_ended(
    coven: Coven, on_engine_clock: Engine
) -> None:
    on_engine_clock.add("backup", "@yearly")
    coven.json("run-now", "backup", "--key", "k")
    react(on_engine_clock)
    again = coven.json("run-now", "backup", "--key", "k")
    assert (again["state"], again["disposition"]) == ("settled", "succeeded")
    assert "ended: succeeded" in coven("run-now", "backup", "--key", "k")[1]
    assert len(on_engine_clock.runtime.launches) == 1


# -- cancel ---------------------------------------------------------------------------------
def test_cancel_a_planned_run_ends_it_at_once(coven: Coven) -> None:
    coven.add("backup", *YEARLY)
    run_id = coven.json("run-now", "backup")["run_id"]
    cancelled = coven.json("cancel", run_id, "--reason", "wrong disk")
    assert cancelled["run_id"] == run_id
    assert (cancelled["state"], cancelled["disposition"]) == ("settled", "cancelled")
    (row,) = manual_rows(coven, "backup")
    assert row["disposition"] == "cancelled" and "wrong disk" in row["reason"]


def test_cancel_a_running_run_asks_the_scheduler_to_stop_it(coven: Coven, slow: Engine) -> None:
    run_id = only_run_id(coven, "slow")
    requested = coven.json("cancel", run_id, "--reason", "wrong disk")
    assert (requested["run_id"], requested["state"]) == (run_id, "running")
    ((number, _, requested_at, by, scope, reason),) = attempt_rows(slow, run_id)
    assert (number, scope, reason) == (1, "run", "wrong disk")
    assert requested_at is not None and by
    (launch,) = slow.runtime.running.values()
    react(slow)
    assert slow.runtime.cancels == [launch.attempt_id]
    slow.runtime.finish(launch, code=-15, cancelled=True)
    react(slow)
    assert disposition(coven, "slow", run_id) == "cancelled"
    assert attempt_rows(slow, run_id)[0][1] == "cancelled"


def test_cancel_a_running_run_reads_well(coven: Coven, slow: Engine) -> None:
    run_id = only_run_id(coven, "slow")
    assert coven("cancel", run_id) == (
        0, f"Run {run_id} is running; the scheduler has been asked to stop it.\n", ""
    )  # fmt: skip


def test_cancel_every_active_run_of_a_routine(coven: Coven, slow: Engine) -> None:
    running = only_run_id(coven, "slow")
    planned = coven.json("run-now", "slow")["run_id"]
    document = coven.json("cancel", "--routine", "slow", "--reason", "enough")
    assert document["routine"] == "slow"
    assert [(r["run_id"], r["state"], r["disposition"]) for r in document["runs"]] == [
        (running, "running", None),
        (planned, "settled", "cancelled"),
    ]
    assert attempt_rows(slow, running)[0][4:] == ("routine", "enough")
    (launch,) = slow.runtime.running.values()
    react(slow)
    slow.runtime.finish(launch, code=-15, cancelled=True)
    react(slow)
    assert disposition(coven, "slow", running) == "cancelled"
    assert coven.json("cancel", "--routine", "slow") == {"routine": "slow", "runs": []}


def test_cancel_a_routine_without_active_runs_says_so(coven: Coven) -> None:
    coven.add("backup", *YEARLY)
    assert coven("cancel", "--routine", "backup") == (
        0, "'backup' has no active run; nothing to cancel.\n", ""
    )  # fmt: skip


def test_cancel_an_ended_run_again_returns_its_outcome(coven: Coven) -> None:
    """Cancel is idempotent (issue 19, part 2): a second cancel — a retry after a lost answer,
    a second click — finds the run ended and says how, with exit 0, changing nothing."""
    coven.add("backup", *YEARLY)
    run_id = coven.json("run-now", "backup")["run_id"]
    first = coven.json("cancel", run_id)
    assert first["already_ended"] is False
    before = coven.snapshot()
    again = coven.json("cancel", run_id, "--reason", "twice")
    assert again == {**first, "already_ended": True}
    assert (again["state"], again["disposition"]) == ("settled", "cancelled")
    assert coven("cancel", run_id) == (
        0, f"Run {run_id} had already ended: cancelled; nothing to cancel.\n", ""
    )  # fmt: skip
    assert coven.snapshot() == before


def test_cancel_a_succeeded_run_returns_its_outcome(coven: Coven, on_engine_clock: Engine) -> None:
    on_engine_clock.add("done", "@yearly")
    run_id = coven.json("run-now", "done")["run_id"]
    react(on_engine_clock)
    again = coven.json("cancel", run_id)
    assert (again["disposition"], again["already_ended"]) == ("succeeded", True)


# -- retry ----------------------------------------------------------------------------------
def test_retry_gives_a_failed_run_a_new_attempt(coven: Coven, on_engine_clock: Engine) -> None:
    engine = on_engine_clock
    engine.runtime.auto_exit = 1
    engine.add("flaky", "@yearly")
    run_id = coven.json("run-now", "flaky")["run_id"]
    react(engine)
    assert disposition(coven, "flaky", run_id) == "failed"
    engine.runtime.auto_exit = 0
    retried = coven.json("retry", run_id)
    assert (retried["run_id"], retried["state"]) == (run_id, "planned")
    react(engine)
    assert [row[:2] for row in attempt_rows(engine, run_id)] == [(1, "action_failed"), (2, None)]
    assert disposition(coven, "flaky", run_id) == "succeeded"


def test_retry_reads_well(coven: Coven, on_engine_clock: Engine) -> None:
    on_engine_clock.runtime.auto_exit = 1
    on_engine_clock.add("flaky", "@yearly")
    run_id = coven.json("run-now", "flaky")["run_id"]
    react(on_engine_clock)
    assert coven("retry", run_id) == (
        0, f"Run {run_id} will get a new attempt; it is planned again.\n", ""
    )  # fmt: skip


def test_retry_of_a_succeeded_run_is_a_conflict(coven: Coven, on_engine_clock: Engine) -> None:
    on_engine_clock.add("backup", "@yearly")
    run_id = coven.json("run-now", "backup")["run_id"]
    react(on_engine_clock)
    coven.refuses("retry", run_id, status=3, message=f"run {run_id} already ended (succeeded)")


def test_retry_of_a_deleted_routines_run_is_refused_and_keeps_its_failure(
    coven: Coven, on_engine_clock: Engine
) -> None:
    """Planned again, it would only be skipped ("the routine was deleted"), and that skip
    would replace the failure on record: refused, saying why, and nothing changes."""
    engine = on_engine_clock
    engine.runtime.auto_exit = 1
    engine.add("gone", "@yearly")
    run_id = coven.json("run-now", "gone")["run_id"]
    react(engine)
    coven("routine", "delete", "gone")
    coven.refuses("retry", run_id, status=3,
                  message=f"run {run_id} belongs to the deleted routine gone: it never runs again")  # fmt: skip
    react(engine)
    assert [row[:2] for row in attempt_rows(engine, run_id)] == [(1, "action_failed")]
    kept = engine.store.conn.execute(
        "SELECT disposition FROM occurrences WHERE run_id = ?", (run_id,)
    ).fetchone()
    assert kept == ("failed",)


def test_retry_of_an_ambiguous_run_points_at_reconcile(
    coven: Coven, on_engine_clock: Engine, data_dir: Any
) -> None:
    old = on_engine_clock
    old.runtime.auto_exit = None
    old.add("slow", "@hourly")
    old.run_until(T0 + minutes(1))
    old.clock.advance(LEASE_TTL + timedelta(seconds=1))
    new = make_engine(data_dir, old.clock)  # the old leader is gone; its run may have run
    try:
        new.run_until(old.clock.now_utc() + minutes(1))
    finally:
        new.store.close()
    run_id = only_run_id(coven, "slow")
    assert disposition(coven, "slow", run_id) == "recovery_required"
    coven.refuses("retry", run_id, status=3, message=f"decide with 'coven reconcile {run_id}'")


# -- bad input ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["run-now", "nobody"], "no routine named 'nobody'"),
        (["run-now"], "the following arguments are required: NAME"),
        (["run-now", "backup", "--key", ""], "argument --key: must not be empty"),
        (["run-now", "backup", "--key", "  "], "argument --key: must not be empty"),
        (["cancel"], "one of the arguments RUN_ID --routine is required"),
        (["cancel", "run0", "--routine", "backup"], "not allowed with argument"),
        (["cancel", "run0"], "no run 'run0'"),
        (["cancel", "--routine", "nobody"], "no routine named 'nobody'"),
        (["retry", "run0"], "no run 'run0'"),
        (["retry"], "the following arguments are required: RUN_ID"),
        (["retry", "run0", "--reason", "x"], "unrecognized arguments: --reason"),
    ],
)
def test_bad_input_exits_2_and_changes_nothing(coven: Coven, args: list[str], message: str) -> None:
    coven.add("backup", *YEARLY)
    coven.json("run-now", "backup", "--key", "k")
    coven.refuses(*args, message=message)
