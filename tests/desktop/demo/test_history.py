"""The demo store holds the history the windows are meant to explain (no Qt here)."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from coven_core.integrity.doctor import doctor
from coven_core.store.store import Store
from coven_core.views.attention import attention
from coven_core.views.quarantined import quarantined
from coven_desktop.demo.__main__ import _ram_disk
from coven_desktop.demo.history import NOW, build


@pytest.fixture(scope="module")
def store() -> Iterator[Store]:
    scratch = Path(tempfile.mkdtemp(dir=_ram_disk()))  # the store fsyncs every commit
    try:
        build(scratch / "data")
        opened = Store.open(scratch / "data", NOW)
        yield opened
        opened.close()
    finally:
        shutil.rmtree(scratch)


def dispositions(store: Store, routine: str) -> set[tuple[str, str | None]]:
    rows = store.conn.execute(
        "SELECT o.disposition, o.reason FROM occurrences o JOIN routines r "
        "ON r.id = o.routine_id WHERE r.name = ?",
        (routine,),
    )
    return {(disposition, (reason or "").split(":")[0] or None) for disposition, reason in rows}


def test_successes_a_failure_and_a_timeout(store: Store) -> None:
    found = dispositions(store, "photo-import")
    assert {("succeeded", None), ("failed", "action_failed"), ("timed_out", "timed_out")} <= found


def test_both_spring_forwards_are_skipped(store: Store) -> None:
    assert ("skipped", "nonexistent_local_time") in dispositions(store, "nightly-report")  # NY
    assert ("skipped", "nonexistent_local_time") in dispositions(store, "backup")  # Berlin


def test_the_weekend_asleep_is_one_coalesced_window(store: Store) -> None:
    ((count, cause),) = store.conn.execute(
        "SELECT o.window_count, o.cause FROM occurrences o JOIN routines r "
        "ON r.id = o.routine_id WHERE r.name = 'sync-notes' AND o.reason = 'missed'"
    )
    assert (cause, count > 20) == ("asleep", True)


def test_a_run_awaits_a_decision_with_its_journal(store: Store) -> None:
    (item,) = attention(store, NOW)
    assert (item.routine, item.kind) == ("agent-report", "recovery_required")
    (attempt,) = item.attempts
    assert [r["event"] for r in attempt.journal] == ["runner_started", "intent", "spawned"]
    assert "summarising 9 of 14" in attempt.stdout_tail
    assert not any(fact.alive for fact in attempt.processes())


def test_one_routine_is_quarantined_with_its_failures(store: Store) -> None:
    (found,) = quarantined(store)
    assert found.name == "fetch-mail" and len(found.failures) == 3
    assert "Authorization failure" in found.failures[0].output


def test_the_doctor_finds_nothing_wrong(store: Store) -> None:
    """Nothing the pictures would show as a problem the demo itself made: its attempts' files
    are private, as a runner leaves them."""
    report = doctor(store, NOW)
    assert report.ok and [f.message for f in report.warnings if f.check == "location"] == []
