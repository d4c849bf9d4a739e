"""``coven explain NAME [--count N]``: state, verdict and the next moments with every
time-zone decision, printed as ``coven preview`` prints them."""

from __future__ import annotations

import re

import pytest

from tests.core.cli.conftest import Coven

NEW_YORK = ("--schedule", "30 2 * * *", "--tz", "America/New_York")


def test_json_has_state_verdict_and_preview_fields(coven: Coven) -> None:
    coven.add("backup", *NEW_YORK)
    doc = coven.json("explain", "backup")
    assert (doc["routine"], doc["state"], doc["state_reason"], doc["revision"]) == (
        "backup", "active", None, 1
    )  # fmt: skip
    assert (doc["schedule"], doc["timezone"]) == ("cron:30 2 * * *", "America/New_York")
    assert doc["tzdb_version"] and len(doc["occurrences"]) == 10
    first = doc["occurrences"][0]
    assert (
        doc["verdict"] == f"It will run next at {first['utc']} ({first['local'][:10]} 02:30 local)."
    )


def test_every_time_zone_decision_in_a_year_is_explained(coven: Coven) -> None:
    coven.add("backup", *NEW_YORK)
    moments = coven.json("explain", "backup", "--count", "400")["occurrences"]
    gaps = [m for m in moments if m["reason"] == "nonexistent_local_time"]
    folds = [m for m in moments if m["note"] and "happens twice" in m["note"]]
    assert gaps and all(m["disposition"] == "skipped" for m in gaps)
    assert "does not exist in America/New_York" in gaps[0]["note"]
    assert folds == []  # 02:30 is never repeated in New York: clocks fall back at 02:00
    coven.json("routine", "edit", "backup", "--schedule", "30 1 * * *")
    moments = coven.json("explain", "backup", "--count", "400")["occurrences"]
    assert any(m["note"] and "happens twice" in m["note"] for m in moments)


def test_a_paused_routine_says_why_it_will_not_run(coven: Coven) -> None:
    coven.add("backup", *NEW_YORK)
    coven("pause", "backup", "--reason", "on holiday")
    doc = coven.json("explain", "backup", "--count", "1")
    assert doc["verdict"] == "It will not run: the routine is paused (on holiday)."
    assert len(doc["occurrences"]) == 1


def test_readable_output_is_the_preview_table_under_the_verdict(
    coven: Coven, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LC_ALL", "de_DE.UTF-8")
    coven.add("backup", *NEW_YORK)
    status, out, _ = coven("explain", "backup", "--count", "400")
    lines = out.splitlines()
    assert status == 0
    assert lines[0] == "backup  ·  active  ·  revision 1"
    assert lines[1].startswith("Sie läuft als Nächstes um ")
    assert lines[3].startswith("cron:30 2 * * *  ·  America/New_York  ·  tzdb ")
    assert lines[4].split()[-2:] == ["UTC", "Status"]
    assert re.fullmatch(r"\d\d\.\d\d\.\d{4}, 02:30:00 +UTC-0[45]:00 .* geplant", lines[5])
    notes = [line for line in lines if line.startswith("  • ")]
    assert notes and all("gibt es in America/New_York nicht" in note for note in notes)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["explain", "nobody"], "no routine named 'nobody'"),
        (["explain", "backup", "--count", "0"], "0 must be at least 1"),
        (["explain"], "the following arguments are required: NAME"),
    ],
)
def test_bad_input_exits_2_and_changes_nothing(coven: Coven, args: list[str], message: str) -> None:
    coven.add("backup", *NEW_YORK)
    coven.refuses(*args, message=message)
