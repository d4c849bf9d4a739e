"""A broken routine as a person meets it on the command line (issue #18, DESIGN §6): every
reading command still answers for all routines and names the broken one, with how to mend it."""

from __future__ import annotations

from datetime import timedelta

import apsw
import pytest

from coven_core.scheduling import routines
from tests.core.cli.conftest import Coven, react
from tests.core.conftest import Engine

REASON = "unknown time zone 'Mars/Olympus'"


@pytest.fixture
def broken(coven: Coven, on_engine_clock: Engine) -> Coven:
    """``good`` and ``bad``; then ``bad``'s stored zone is one no tz database has."""
    coven.add("good", "--schedule", "every 5m", "--tz", "UTC")
    coven.add("bad", "--schedule", "every 5m", "--tz", "UTC")
    conn = apsw.Connection(str(coven.data_dir / "coven.db"))
    conn.execute(
        "UPDATE revisions SET timezone = 'Mars/Olympus' "
        "WHERE routine_id = (SELECT id FROM routines WHERE name = 'bad')"
    )
    conn.close()
    routines.timetable.cache_clear()
    return coven


def test_routine_list_answers_for_every_routine_and_names_the_broken_one(broken: Coven) -> None:
    status, out, err = broken("routine", "list")
    assert (status, err) == (0, "")
    assert "good" in out and REASON in out and "coven routine edit bad --tz ZONE" in out
    listed = {r["name"]: r for r in broken.json("routine", "list")["routines"]}
    assert listed["good"]["state"] == "active" and listed["good"]["broken"] is None
    assert listed["bad"]["state"] == "broken" and REASON in listed["bad"]["broken"]


def test_doctor_reports_it_as_an_error_naming_the_routine(broken: Coven) -> None:
    status, out, _ = broken("doctor")
    assert status == 3  # doctor's status for a store that contradicts its promises
    assert "routine 'bad' is broken" in out and REASON in out
    found = broken("doctor", "--json")[1]
    assert '"routines": "error"' in found


def test_status_and_attention_show_it_once_the_scheduler_stopped_it(
    broken: Coven, on_engine_clock: Engine
) -> None:
    react(on_engine_clock)  # its first pass reviews every routine before any is due
    [entry] = broken.json("status")["broken_routines"]
    assert entry["name"] == "bad" and REASON in entry["reason"]
    [entry] = broken.json("attention")["broken_routines"]
    assert entry["name"] == "bad"
    status, out, _ = broken("attention")
    assert status == 0 and "routine_broken · bad" in out


def test_explain_refuses_with_the_reason_and_the_fix(broken: Coven) -> None:
    broken.refuses("explain", "bad", message="routine 'bad' is broken")


def test_an_edit_of_the_zone_mends_it(broken: Coven) -> None:
    broken.json("routine", "edit", "bad", "--tz", "Europe/Berlin")
    listed = {r["name"]: r for r in broken.json("routine", "list")["routines"]}
    assert listed["bad"]["state"] == "active" and listed["bad"]["broken"] is None


def test_history_names_the_broken_window_once(broken: Coven, on_engine_clock: Engine) -> None:
    """The window a broken routine could not plan: its reason is its cause, said once."""
    react(on_engine_clock)  # the start's review stops ``bad`` before its first moment
    on_engine_clock.run_until(on_engine_clock.clock.now_utc() + timedelta(minutes=20))
    broken.json("routine", "edit", "bad", "--tz", "UTC")
    react(on_engine_clock)  # mended: the pass records the window it could not plan
    [window] = [row for row in broken.json("history", "bad")["occurrences"]
                if row["reason"] == "routine_broken"]  # fmt: skip
    # Its moments could not be computed, so it has bounds but no count.
    assert window["window"]["first"] and window["window"]["count"] is None
    status, out, _ = broken("history", "bad")
    [line] = [line for line in out.splitlines() if "routine_broken" in line]
    assert status == 0 and line.count("routine_broken") == 1, line
