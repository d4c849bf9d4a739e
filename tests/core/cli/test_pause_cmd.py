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
    assert coven.json("routine", "show", "backup")["state"] == "active"
    assert "all scheduling is paused" in coven.json("explain", "backup")["verdict"]
    assert coven.json("resume", "--all")["state"] == "active"
    assert coven.json("status")["scheduling_paused"] is False


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
