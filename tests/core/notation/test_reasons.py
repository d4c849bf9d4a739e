"""The engine's reasons in a person's language, part by part (DESIGN §12)."""

from __future__ import annotations

import pytest

from coven_core.notation import reasons
from coven_core.notation.reasons import reason_text

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
