"""What an export says does not carry over (DESIGN §15): every policy of §14 a routine sets,
said as ``routine show`` says it; a trial goes out paused, since the other system would start
its command."""

from __future__ import annotations

from datetime import date, timedelta

import pytest

from coven_core.errors import ValidationError
from coven_core.model import RevisionSpec
from coven_core.moving.dst_differences import Scheduler
from coven_core.moving.export import (
    Refused,
    Routine,
    export_each,
    renderer,
    stored_each,
    stored_routines,
)
from tests.core.conftest import T0, Engine

POLICIES = {
    "except_dates": (date(2026, 12, 24),),
    "max_runs_per_day": 3,
    "cooldown": timedelta(minutes=30),
    "group": "disk",
    "on_ac_power": True,
    "retries": 2,
}


def notes_of(engine: Engine, target: Scheduler, image: str | None = None) -> dict[str, list[str]]:
    routines = stored_routines(engine.store)
    each = export_each(target, routines, renderer(target, image), T0)
    return {one.name: list(one.rendered.notes) for one in each}  # type: ignore[union-attr]


def test_every_policy_that_does_not_carry_over_is_said(engine: Engine) -> None:
    engine.operator.add_routine(
        "backup", RevisionSpec("30 2 * * *", "UTC", ("/usr/bin/backup",), **POLICIES)
    )
    notes = notes_of(engine, Scheduler.SYSTEMD)["backup"]
    assert "Except: 2026-12-24" in notes
    assert "Budget: 3 runs a day" in notes
    assert any(note.startswith("Cooldown: 30m after a failure") for note in notes)
    assert any(note.startswith("Group: disk") for note in notes)
    assert any(note.startswith("Conditions: on AC power") for note in notes)
    assert "2 retries with Coven's backoff" in notes


def test_a_trial_goes_out_paused(engine: Engine) -> None:
    engine.operator.add_routine(
        "trial", RevisionSpec("30 2 * * *", "UTC", ("/usr/bin/backup",), shadow=True)
    )
    (routine,) = stored_routines(engine.store)
    assert routine.paused
    (one,) = export_each(Scheduler.KUBERNETES, [routine], renderer(Scheduler.KUBERNETES, "x"), T0)
    assert '"suspend": true' in next(iter(one.rendered.files.values()))  # type: ignore[union-attr]
    assert "Trial: shadow: decided as if live, never started" in one.rendered.notes  # type: ignore[union-attr]


def test_a_routine_that_cannot_be_read_is_refused_by_name_and_the_rest_stay(
    engine: Engine,
) -> None:
    engine.add("backup", "30 2 * * *")
    rid = engine.add("sync", "*/15 * * * *")
    engine.store.conn.execute("UPDATE revisions SET argv = 'not json' WHERE routine_id = ?", (rid,))
    backup, sync = stored_each(engine.store)
    assert isinstance(backup, Routine) and isinstance(sync, Refused)
    assert sync.why.startswith("routine 'sync' cannot be read: ")
    with pytest.raises(ValidationError, match="routine 'sync' cannot be read"):
        stored_routines(engine.store)  # coven export: all or nothing
