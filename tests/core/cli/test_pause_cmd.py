"""``coven pause NAME|--all [--reason TEXT]`` and ``coven resume NAME|--all``."""

from __future__ import annotations

import pytest

from tests.core.cli.conftest import Coven

# New Year's midnight only: no moment falls between adding, pausing and resuming in a test.
YEARLY = ("--schedule", "0 0 1 1 *", "--tz", "UTC")


def test_pause_and_resume_a_routine(coven: Coven) -> None:
    coven.add("backup", *YEARLY)
    paused = coven.json("pause", "backup", "--reason", "disk swap")
    assert paused == {
        "scope": "routine",
        "routine": "backup",
        "state": "paused",
        "reason": "disk swap",
    }
    shown = coven.json("routine", "show", "backup")
    assert (shown["state"], shown["state_reason"]) == ("paused", "disk swap")
    resumed = coven.json("resume", "backup")
    assert resumed == {"scope": "routine", "routine": "backup", "state": "active", "skipped": 0}
    assert coven.json("routine", "show", "backup")["state"] == "active"


def test_pause_all_stops_every_routine_without_touching_their_state(coven: Coven) -> None:
    coven.add("backup", *YEARLY)
    assert coven.json("pause", "--all", "--reason", "travel")["scope"] == "all"
    assert coven.json("status")["scheduling_paused"] is True
    assert "all scheduling is paused" in coven.json("explain", "backup")["verdict"]
    assert coven.json("resume", "--all")["state"] == "active"
    assert coven.json("status")["scheduling_paused"] is False
    assert coven.json("routine", "show", "backup")["state"] == "active"


def test_after_pause_all_every_routine_shows_as_paused(coven: Coven) -> None:
    """Issue 19, part 3: after ``pause --all``, ``routine list`` said "active, next …". Every
    routine shows paused (the reason says by what), with no next run; one paused by itself
    keeps its own reason, and ``resume --all`` leaves it paused."""
    coven.add("backup", *YEARLY)
    coven.add("report", *YEARLY)
    coven.json("pause", "report", "--reason", "disk swap")
    next_due = coven.json("routine", "show", "backup")["next_due"]
    coven.json("pause", "--all", "--reason", "travel")
    listed = {r["name"]: r for r in coven.json("routine", "list")["routines"]}
    assert [(r["state"], r["state_reason"], r["paused_all"], r["next_due"]) for r in
            listed.values()] == [("paused", "all scheduling is paused", True, None),
                                 ("paused", "disk swap", True, None)]  # fmt: skip
    _header, *rows = coven("routine", "list")[1].splitlines()
    assert [row.split()[:2] + row.split()[-2:] for row in rows] == [
        ["backup", "paused", "—", "—"], ["report", "paused", "—", "—"]
    ]  # fmt: skip
    assert (
        "State:        paused (all scheduling is paused)" in coven("routine", "show", "backup")[1]
    )
    assert coven.json("explain", "backup")["state"] == "paused"
    coven.json("resume", "--all")
    listed = {r["name"]: r for r in coven.json("routine", "list")["routines"]}
    assert (listed["backup"]["state"], listed["backup"]["next_due"]) == ("active", next_due)
    assert (listed["report"]["state"], listed["report"]["paused_all"]) == ("paused", False)


def test_readable_confirmations(coven: Coven) -> None:
    coven.add("backup", *YEARLY)
    assert coven("pause", "backup")[1] == "Paused 'backup'.\n"
    assert coven("resume", "backup")[1].startswith("Resumed 'backup'; 0 missed")
    assert coven("pause", "--all")[1] == "Paused all scheduling.\n"


@pytest.mark.parametrize(
    ("setup", "args", "message"),
    [
        ([], ["pause", "nobody"], "no routine named 'nobody'"),
        ([], ["resume", "nobody"], "no routine named 'nobody'"),
        ([], ["pause"], "one of the arguments NAME --all is required"),
        ([], ["pause", "backup", "--all"], "not allowed with argument"),
        ([], ["resume", "--reason", "x", "backup"], "unrecognized arguments: --reason"),
    ],
)
def test_bad_input_exits_2_and_changes_nothing(
    coven: Coven, setup: list[list[str]], args: list[str], message: str
) -> None:
    coven.add("backup", *YEARLY)
    for step in setup:
        assert coven(*step)[0] == 0
    coven.refuses(*args, message=message)


def test_pause_and_resume_are_idempotent(coven: Coven) -> None:
    coven.add("backup", *YEARLY)
    assert coven.json("pause", "backup")["state"] == "paused"
    assert coven.json("pause", "backup")["state"] == "paused"
    assert coven.json("resume", "backup")["state"] == "active"
    assert coven.json("resume", "backup")["skipped"] == 0
