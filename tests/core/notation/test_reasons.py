"""The engine's reasons in a person's language, part by part (DESIGN §12)."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, datetime

import pytest

from coven_core.notation import reasons
from coven_core.notation.reasons import reason_text
from coven_core.runner.journal import _Reader
from coven_core.runtime.runner import RESTARTED_SINCE, _journal_of, exit_from_journal

NOW = datetime(2026, 1, 1, tzinfo=UTC)

#: What recovery writes when the leader stopped while a command ran (runtime/base.py): a
#: sentence of the engine's that itself holds "; ", between a failure class and a policy.
STOPPED = (
    "ambiguous: the scheduler stopped while the command may have been running; outcome "
    "unknown; not retried: it may have run (the routine is not idempotent)"
)


def test_a_sentence_that_holds_a_semicolon_is_said_whole() -> None:
    assert reason_text(STOPPED, "de_DE") == (
        "Ausgang unbekannt: der Planer hielt an, während der Befehl womöglich lief; Ausgang "
        "unbekannt; nicht wiederholt: sie ist womöglich gelaufen (die Routine ist nicht "
        "idempotent)"
    )


@pytest.mark.parametrize("reason", [
    STOPPED,
    "exited with status 3; not retried: cancelled by a person",
    "a person's own words; kept as typed",
])  # fmt: skip
def test_english_reads_as_written(reason: str) -> None:
    assert reason_text(reason, "en_US") == reason


def test_what_is_not_the_engines_stays_as_it_is_beside_what_is() -> None:
    assert reason_text("disk on fire; exited with status 3", "de_DE") == (
        "disk on fire; mit Status 3 beendet"
    )


def test_a_window_says_a_pause_for_a_decision_in_its_own_words() -> None:
    """The run's id and the command line's way to act are the CLI's; a window has its own."""
    waits = reasons.AWAITS_DECISION.format(run="run3d8f0a1b2c3d")
    kept = reasons.KEPT_PAUSED.format(run="run3d8f0a1b2c3d")
    assert reasons.window_reason_text(waits, "en_US") == (
        "a run needs your decision in Needs attention"
    )
    assert reasons.window_reason_text(kept, "de_DE").startswith("nach Ihrer Entscheidung ")
    assert reasons.reason_text(waits, "en_US") == waits  # the CLI keeps its words
    assert reasons.window_reason_text("holiday", "de_DE") == "holiday"  # a person's, as is


#: Journals a runner could leave that its reader cannot take whole, one problem each.
DAMAGED = {
    "a line that is not JSON": b"not json\n",
    "an event no runner writes": b'{"event": "teleported", "at": "2026-01-01T00:00:00+00:00"}\n',
    "a record twice": (
        b'{"event": "intent", "at": "2026-01-01T00:00:00+00:00"}\n'
        b'{"event": "intent", "at": "2026-01-01T00:00:01+00:00"}\n'
    ),
    "a record without a field it needs": b'{"event": "spawned", "at": "2026-01-01T00:00:00+00:00"}\n',
    "a record with a field of the wrong kind": (
        b'{"event": "spawned", "at": "2026-01-01T00:00:00+00:00", "pid": "many"}\n'
    ),
    "a last line cut short": b'{"event": "intent", "at": "2026-',
}


@pytest.mark.parametrize("journal", list(DAMAGED.values()), ids=list(DAMAGED))
def test_what_a_damaged_journal_lacks_is_said_in_the_readers_language(journal: bytes) -> None:
    """The runner's notes on its journal were English inside a German sentence."""
    read = _Reader().read(journal)
    assert read.problems, "the journal should read with a problem"
    said = exit_from_journal("a1", replace(read, intent=True), NOW).message or ""
    german = reason_text(said, "de_DE")
    assert german != said and not re.search(r"\bline \d+:", german)
    assert not {"skipped", "skipped)", "ignored", "unknown", "incomplete"} & set(german.split())
    assert reason_text(said, "en_US") == said


def test_a_journal_that_is_gone_is_said_in_the_readers_language(tmp_path) -> None:  # type: ignore[no-untyped-def]
    journal = _journal_of(tmp_path, started=True, boot=None)
    said = exit_from_journal("a1", journal, NOW).message or ""
    assert said.endswith(f"(the journal {tmp_path / 'journal.jsonl'} is gone)")
    german = reason_text(said, "de_DE")
    assert "is gone" not in german and str(tmp_path / "journal.jsonl") in german


def test_a_restart_of_the_machine_is_said_in_the_readers_language(tmp_path) -> None:  # type: ignore[no-untyped-def]
    journal = _journal_of(tmp_path, started=False, boot="a boot before")
    said = exit_from_journal("a1", journal, NOW).message or ""
    assert said.endswith(f"({RESTARTED_SINCE})")
    german = reason_text(said, "de_DE")
    assert "neu gestartet" in german and "restarted" not in german
