"""``coven list --state STATE`` and ``coven inspect OCCURRENCE_ID|RUN_ID`` (issue #5, DESIGN §10): what is where, and one occurrence in full, tokens only as fingerprints (§13)."""

from __future__ import annotations

import re

import pytest

from coven_core.scheduling import lease
from tests.core.cli.conftest import Awaiting, Coven

YEARLY = ("--schedule", "0 0 1 1 *", "--tz", "UTC")
SECTIONS = ["Occurrence:", "Attempt 1:", "Delivery: none", "Decisions: none", "Lease:"]


def sections(out: str) -> dict[str, dict[str, str]]:
    """``Heading:`` lines, each with the ``  key: value`` lines under it."""
    found: dict[str, dict[str, str]] = {}
    for line in out.splitlines():
        if line and not line.startswith(" "):
            heading = found.setdefault(line, {})
        elif line:
            key, value = line.split(":", 1)
            heading[key.strip()] = value.strip()
    return found


# -- list -----------------------------------------------------------------------------------
def test_list_recovery_required(coven: Coven, awaiting: Awaiting) -> None:
    doc = coven.json("list", "--state", "recovery_required")
    assert doc["state"] == "recovery_required"
    (item,) = doc["items"]
    assert (item["run_id"], item["occurrence_id"], item["routine"]) == (
        awaiting.run_id, awaiting.occurrence_id, "backup"
    )  # fmt: skip
    assert item["utc"] == "2026-03-01T12:00:00Z"
    assert item["disposition"] == "recovery_required"
    header, row = coven("list", "--state", "recovery_required")[1].splitlines()
    assert header.split() == ["Occurrence", "Run", "Routine", "UTC", "State", "Reason"]
    assert row.split()[:5] == [awaiting.occurrence_id, awaiting.run_id, "backup",
                               "2026-03-01T12:00:00Z", "recovery_required"]  # fmt: skip


def test_list_paused_routines(coven: Coven, awaiting: Awaiting) -> None:
    (item,) = coven.json("list", "--state", "paused")["items"]
    assert (item["routine"], item["state"]) == ("backup", "paused")
    assert item["reason"] == f"run {awaiting.run_id} needs your decision (coven attention)"
    header, row = coven("list", "--state", "paused")[1].splitlines()
    assert header.split() == ["Routine", "State", "Since", "(UTC)", "Failures", "Reason"]
    assert row.split()[:4] == ["backup", "paused", "2026-03-01T12:12:01Z", "0"]


def test_list_due(coven: Coven) -> None:
    coven.add("backup", *YEARLY)
    assert coven.json("list", "--state", "due") == {"state": "due", "items": []}
    assert coven("list", "--state", "due") == (0, "Nothing is due.\n", "")
    ref = coven.json("run-now", "backup")
    (item,) = coven.json("list", "--state", "due")["items"]
    assert (item["run_id"], item["state"], item["disposition"]) == (ref["run_id"], "planned", None)


def test_list_accepts_every_state_its_rows_show(coven: Coven, awaiting: Awaiting) -> None:
    """Issue 19, part 2: a row of ``list --state due`` says ``planned``, and ``--state
    planned`` was refused. Every state a row shows (its State column: the disposition, else
    the state) is accepted, and listing by it finds that row."""
    coven.add("later", *YEARLY)
    ref = coven.json("run-now", "later")  # planned and due now
    accepted = _state_choices(coven)
    for state in accepted:
        for item in coven.json("list", "--state", state)["items"]:
            shown = item.get("disposition") or item["state"]
            assert shown in accepted, (state, item)
            found = coven.json("list", "--state", shown)["items"]
            assert item in found, (state, item)
    planned = [item["run_id"] for item in coven.json("list", "--state", "planned")["items"]]
    assert planned == [ref["run_id"]]
    _header, row = coven("list", "--state", "due")[1].splitlines()
    assert row.split()[4] == "planned"


def _state_choices(coven: Coven) -> list[str]:
    status, _out, err = coven("list", "--state", "?")
    assert status == 2
    return [choice.strip(" '") for choice in err.split("choose from")[1].rstrip(")\n").split(",")]


@pytest.mark.parametrize("state", ["claimed", "running", "quarantined"])
def test_other_states_are_empty_here(coven: Coven, awaiting: Awaiting, state: str) -> None:
    assert coven.json("list", "--state", state) == {"state": state, "items": []}


# -- inspect --------------------------------------------------------------------------------
def test_inspect_by_run_or_occurrence_is_the_same(coven: Coven, awaiting: Awaiting) -> None:
    by_run = coven.json("inspect", awaiting.run_id)
    assert coven.json("inspect", awaiting.occurrence_id) == by_run
    assert set(by_run) == {"occurrence", "attempts", "delivery", "decisions", "lease"}
    assert by_run["occurrence"]["id"] == awaiting.occurrence_id
    assert by_run["occurrence"]["disposition"] == "recovery_required"
    assert [a["failure_class"] for a in by_run["attempts"]] == ["ambiguous"]
    assert (by_run["delivery"], by_run["decisions"]) == (None, [])
    assert re.fullmatch(r"[0-9a-f]{8}", by_run["lease"]["token"])


def test_inspect_reads_as_sections(coven: Coven, awaiting: Awaiting) -> None:
    status, out, err = coven("inspect", awaiting.run_id)
    assert (status, err) == (0, "")
    found = sections(out)
    assert list(found) == SECTIONS
    assert found["Occurrence:"]["id"] == awaiting.occurrence_id
    assert found["Occurrence:"]["scheduled_utc"] == "2026-03-01T12:00:00.000000Z"
    assert (found["Attempt 1:"]["failure_class"], found["Attempt 1:"]["exit_code"]) == (
        "ambiguous", "—"
    )  # fmt: skip
    assert found["Lease:"]["generation"] == "2"


def test_inspect_shows_the_decision(coven: Coven, awaiting: Awaiting) -> None:
    coven.json("reconcile", awaiting.run_id, "--as", "failed", "--reason", "half a backup")
    (decision,) = coven.json("inspect", awaiting.run_id)["decisions"]
    assert (decision["outcome"], decision["reason"]) == ("failed", "half a backup")
    assert re.fullmatch(r"[0-9a-f]{64}", decision["evidence_digest"])
    found = sections(coven("inspect", awaiting.run_id)[1])
    assert found[f"Decision {decision['id']}:"]["reason"] == "half a backup"


def test_the_lease_token_is_never_shown_in_full(coven: Coven, awaiting: Awaiting) -> None:
    held = lease.current(awaiting.engine.store.conn)
    assert held is not None
    for args in (("inspect", awaiting.run_id), ("inspect", awaiting.run_id, "--json")):
        out = coven(*args)[1]
        assert held.holder not in out and held.fingerprint() in out


# -- bad input ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["inspect", "nope"], "no occurrence or run 'nope'"),
        (["inspect"], "the following arguments are required: OCCURRENCE_ID|RUN_ID"),
        (["list"], "the following arguments are required: --state"),
        (["list", "--state", "asleep"], "argument --state: invalid choice: 'asleep'"),
        (["list", "--state", "due", "backup"], "unrecognized arguments: backup"),
    ],
)
def test_bad_input_exits_2_and_changes_nothing(
    coven: Coven, awaiting: Awaiting, args: list[str], message: str
) -> None:
    coven.refuses(*args, message=message)
