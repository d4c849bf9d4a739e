"""The operator API's validation and explanations (issue #3)."""

from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from coven_core import queries
from coven_core.errors import ValidationError
from coven_core.model import RevisionSpec
from tests.core.conftest import T0, Engine


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"argv": ()}, "the command is empty"),
        ({"env": (("BAD-NAME", "x"),)}, "environment name 'BAD-NAME' is not valid"),
        ({"cwd": "relative/dir"}, "must be an absolute path"),
        ({"retries": -1}, "--retries must be 0 or more"),
    ],
)
def test_bad_revision_is_refused_and_nothing_is_stored(engine: Engine, change, message) -> None:
    spec = replace(RevisionSpec("@daily", "UTC", ("/bin/true",)), **change)
    with pytest.raises(ValidationError, match=message):
        engine.operator.add_routine("r", spec)
    assert engine.store.conn.execute("SELECT count(*) FROM routines").fetchone()[0] == 0


def test_explain_looks_past_skipped_moments(engine: Engine) -> None:
    engine.add("nightly", "30 2 * * *", tz="America/New_York")
    explained = queries.explain(engine.store, "nightly", datetime(2026, 3, 8, 6, tzinfo=UTC), 1)
    assert [m.skipped for m in explained.upcoming.moments] == [True]
    assert explained.verdict == "It will run next at 2026-03-09T06:30:00Z (2026-03-09 02:30 local)."


def test_explain_says_when_every_time_falls_in_a_gap(engine: Engine) -> None:
    engine.add("never", "rrule:FREQ=YEARLY;BYMONTH=3;BYDAY=2SU;BYHOUR=2;BYMINUTE=30",
               tz="America/New_York")  # fmt: skip
    verdict = queries.explain(engine.store, "never", T0, count=2).verdict
    assert verdict.startswith(
        "It will not run: its upcoming times do not exist in America/New_York"
    )


def test_edit_can_keep_an_explicit_anchor(engine: Engine) -> None:
    anchor = datetime(2026, 1, 1, 0, 30, tzinfo=UTC)
    engine.operator.add_routine("r", RevisionSpec("every 2h", "UTC", ("/bin/true",)), anchor)
    engine.operator.edit_routine("r", lambda s: replace(s, schedule="every 3h"), anchor)
    view = queries.show(engine.store, "r")
    assert view.revision.anchor == anchor
    assert view.routine.next_due is not None and view.routine.next_due.minute == 30


def test_every_command_is_audited_even_when_refused(engine: Engine) -> None:
    from coven_core.integrity import audit

    engine.add("r", "@daily")
    engine.operator.pause("r", "holiday")
    with pytest.raises(ValidationError):
        engine.operator.pause("nobody")
    with engine.store.read() as conn:
        rows = [(e.action, e.target, e.why, e.result) for e in audit.entries(conn)]
        assert audit.verify(conn).ok
    assert rows[:3] == [
        ("pause", "nobody", None, "refused: no routine named 'nobody' (see: coven routine list)"),
        ("pause", "r", "holiday", "ok"),
        ("routine.add", "r", None, "ok"),
    ]
