"""The evidence of a run awaiting a person: the runner's and the command's process facts."""

from __future__ import annotations

import json
import subprocess
from datetime import UTC, datetime

from coven_core.integrity import audit
from coven_core.operations.stopping import live
from coven_core.runner.process import boot_id, start_mark, start_time
from coven_core.views.attention import (
    AttemptEvidence,
    Item,
    ProcessFact,
    command_line,
    item_for_run,
)
from tests.core.conftest import T0, Engine, minutes


def evidence(journal: list[dict[str, object]]) -> AttemptEvidence:
    return AttemptEvidence(
        1, "a1", "running", None, None, None, None, None, 4242, False, 4243, False, None,
        journal=journal,
    )  # fmt: skip


def test_process_facts_take_their_start_times_from_the_journal() -> None:
    found = evidence([
        {"event": "runner_started", "runner_pid": 4242, "runner_start": 1772366400.5},
        {"event": "intent"},
        {"event": "spawned", "pid": 4243, "pid_start": 1772366401.0},
    ]).processes()  # fmt: skip
    assert found == [
        ProcessFact("runner", 4242, datetime(2026, 3, 1, 12, 0, 0, 500000, UTC), False),
        ProcessFact("command", 4243, datetime(2026, 3, 1, 12, 0, 1, tzinfo=UTC), False),
    ]


def test_a_journal_without_start_times_shows_none() -> None:
    found = evidence([{"event": "runner_started", "runner_start": "garbage"}]).processes()
    assert [fact.started_at for fact in found] == [None, None]


def test_recent_audit_entries_for_one_target(engine: Engine) -> None:
    engine.add("backup", "@hourly")
    engine.add("sync", "@hourly")
    engine.operator.pause("backup", "holiday")
    (entry,) = audit.recent(engine.store, target="backup", limit=1)
    assert (entry.action, entry.why, entry.result) == ("pause", "holiday", "ok")
    assert [e.target for e in audit.recent(engine.store, limit=2)] == ["backup", "sync"]


def test_what_coven_tried_is_told_in_sentences(engine: Engine) -> None:
    from coven_core.views.attention import item_for_run
    from coven_core.views.story import decision_consequence
    from tests.core.conftest import T0, minutes

    engine.add("backup", "1 12 * * *", retries=1)
    engine.runtime.auto_exit = None
    engine.run_until(T0 + minutes(2))
    engine.runtime.finish(engine.runtime.launches[0], 1)
    engine.run_until(T0 + minutes(30))  # the retry is running: an overrun makes it an item
    engine.store.conn.execute("UPDATE attempts SET overrun_at = ? WHERE number = 2", ("x",))
    run_id = engine.store.conn.execute("SELECT run_id FROM occurrences").fetchone()[0]
    with engine.store.read() as conn:
        item = item_for_run(conn, run_id, engine.clock.now_utc())
    assert item is not None
    assert item.tried_words[:3] == [
        "Claimed to run",
        "Started (runner pid 4242)",
        item.tried_words[2],
    ]
    assert item.tried_words[2].startswith("Failed (action_failed); retried at ")
    assert item.tried_words[2].endswith("(attempt 2)")
    assert decision_consequence("failed", "en_US") == (
        "mark as failed: it counts as a failure; the routine stays paused until you resume it"
    )


def _overrunning(engine: Engine, **options: object) -> str:
    """A run still going far past its usual time (an attention item): its run id."""
    engine.add("backup", "1 12 * * *", **options)
    engine.runtime.auto_exit = None
    engine.run_until(T0 + minutes(2))
    engine.store.conn.execute("UPDATE attempts SET overrun_at = ?", ("x",))
    return str(engine.store.conn.execute("SELECT run_id FROM occurrences").fetchone()[0])


def _item(engine: Engine, run_id: str) -> Item:
    with engine.store.read() as conn:
        found = item_for_run(conn, run_id, engine.clock.now_utc())
    assert found is not None
    return found


def test_an_item_carries_the_command_line_and_folder_it_ran(engine: Engine, tmp_path) -> None:  # type: ignore[no-untyped-def]
    found = _item(engine, _overrunning(engine, cwd=str(tmp_path)))
    assert (found.command, found.cwd) == ("/bin/true", str(tmp_path))
    assert command_line('["rsync", "-a", "my files/", "/mnt"]', False) == (
        "rsync -a 'my files/' /mnt"
    )
    assert command_line('["echo hi | wc -c"]', True) == "echo hi | wc -c"


def test_a_live_command_is_shown_with_its_own_command_line(engine: Engine, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """``sh -c '…; exec sleep 30'`` runs on as ``sleep 30``: that is what ``ps`` shows."""
    run_id = _overrunning(engine)
    sleeping = subprocess.Popen(["sleep", "30"])
    try:
        journal = tmp_path / "attempt" / "journal.jsonl"
        journal.parent.mkdir()
        spawned = {"event": "spawned", "at": "2026-03-01T12:01:00+00:00", "pid": sleeping.pid,
                   "pid_start": start_time(sleeping.pid)}  # fmt: skip
        journal.write_text(json.dumps(spawned) + "\n", encoding="utf-8")
        engine.store.conn.execute("UPDATE attempts SET attempt_dir = ?", (str(journal.parent),))
        (attempt,) = _item(engine, run_id).attempts
        assert attempt.command_alive and attempt.command_pid == sleeping.pid
        assert attempt.command_line == "sleep 30"
    finally:
        sleeping.kill()
        sleeping.wait()
    (attempt,) = _item(engine, run_id).attempts
    assert not attempt.command_alive and attempt.command_line is None  # gone: nothing to show


def test_the_evidence_and_the_refusal_see_the_same_live_runner(engine: Engine, tmp_path) -> None:  # type: ignore[no-untyped-def]
    """A runner whose pid only its journal holds (the store's row lacks it): the evidence
    says it lives, as the refusal of a decision does: one check behind both (DESIGN §8)."""
    run_id = _overrunning(engine)
    runner = subprocess.Popen(["sleep", "30"])
    try:
        journal = tmp_path / "attempt" / "journal.jsonl"
        journal.parent.mkdir()
        started = {"event": "runner_started", "at": "2026-03-01T12:01:00+00:00",
                   "runner_pid": runner.pid, "runner_start": start_time(runner.pid),
                   "runner_mark": start_mark(runner.pid), "boot_id": boot_id()}  # fmt: skip
        journal.write_text(json.dumps(started) + "\n", encoding="utf-8")
        engine.store.conn.execute(
            "UPDATE attempts SET attempt_dir = ?, runner_pid = NULL, runner_start = NULL",
            (str(journal.parent),),
        )
        (attempt,) = _item(engine, run_id).attempts
        with engine.store.read() as conn:
            occurrence = conn.execute("SELECT id FROM occurrences").fetchone()[0]
            refused = [process.pid for process in live(conn, occurrence)]
        assert attempt.runner_alive and refused == [runner.pid]
    finally:
        runner.kill()
        runner.wait()
