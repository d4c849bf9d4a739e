"""``coven preview`` exactly as issue #2 specifies it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable

import pytest

from coven_core.cli.main import main

Invoke = Callable[..., tuple[int, str, str]]


def run_json(capsys: pytest.CaptureFixture[str], *args: str) -> dict:
    assert main(["preview", *args, "--json"]) == 0
    out = capsys.readouterr()
    assert out.err == ""
    return json.loads(out.out)


def test_json_shape_for_the_new_york_spring_gap(capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json(
        capsys, "--schedule", "30 2 * * *", "--tz", "America/New_York",
        "--from", "2026-03-07", "--to", "2026-03-10",
    )  # fmt: skip
    assert doc["schedule"] == "cron:30 2 * * *"
    assert doc["timezone"] == "America/New_York"
    assert doc["tzdb_version"]
    assert doc["occurrences"] == [
        {"local": "2026-03-07T02:30:00", "utc": "2026-03-07T07:30:00Z", "offset": "-05:00",
         "fold": 0, "disposition": "planned", "reason": None, "note": None},
        {"local": "2026-03-08T02:30:00", "utc": "2026-03-08T07:30:00Z", "offset": "-05:00",
         "fold": 0, "disposition": "skipped", "reason": "nonexistent_local_time",
         "note": "02:30 on 2026-03-08 does not exist in America/New_York: clocks jump from "
                 "02:00 to 03:00. Skipped; Coven never moves a run to another time."},
        {"local": "2026-03-09T02:30:00", "utc": "2026-03-09T06:30:00Z", "offset": "-04:00",
         "fold": 0, "disposition": "planned", "reason": None, "note": None},
    ]  # fmt: skip


def test_fold_note_says_the_second_pass_is_not_used(capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json(
        capsys, "--schedule", "cron:30 1 * * *", "--tz", "America/New_York",
        "--from", "2026-11-01T00:00", "--count", "1",
    )  # fmt: skip
    (only,) = doc["occurrences"]
    assert (only["utc"], only["offset"], only["fold"]) == ("2026-11-01T05:30:00Z", "-04:00", 0)
    assert only["note"] == (
        "01:30 on 2026-11-01 happens twice in America/New_York. Runs at the first (UTC-04:00), "
        "not again at the second (UTC-05:00)."
    )


def test_count_defaults_to_ten_without_to(capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json(capsys, "--schedule", "every 15m", "--tz", "UTC", "--from", "2026-01-01T00:00Z")
    assert len(doc["occurrences"]) == 10
    assert doc["occurrences"][1]["utc"] == "2026-01-01T00:15:00Z"


def test_to_is_exclusive(capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json(
        capsys, "--schedule", "@hourly", "--tz", "Asia/Kolkata",
        "--from", "2026-01-01T00:00+05:30", "--to", "2026-01-01T03:00+05:30",
    )  # fmt: skip
    assert [o["local"][11:16] for o in doc["occurrences"]] == ["00:00", "01:00", "02:00"]


def test_rrule_start_option_sets_dtstart(capsys: pytest.CaptureFixture[str]) -> None:
    doc = run_json(
        capsys, "--schedule", "rrule:FREQ=DAILY;INTERVAL=2", "--tz", "Europe/Berlin",
        "--start", "2026-01-01T07:45", "--from", "2026-01-02", "--count", "2",
    )  # fmt: skip
    assert [o["local"] for o in doc["occurrences"]] == [
        "2026-01-03T07:45:00",
        "2026-01-05T07:45:00",
    ]


def test_local_zone_resolves_to_an_iana_key(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TZ", "Europe/Berlin")
    doc = run_json(capsys, "--schedule", "@daily", "--tz", "local", "--count", "1")
    assert doc["timezone"] == "Europe/Berlin"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--schedule", "0 0 32 * *", "--tz", "UTC"], "32 is out of range 1-31"),
        (["--schedule", "@daily", "--tz", "Mars/Olympus"], "unknown time zone 'Mars/Olympus'"),
        (
            ["--schedule", "rrule:FREQ=YEARLY;BYWEEKNO=1", "--tz", "UTC"],
            "unsupported RRULE part BYWEEKNO",
        ),
        (
            ["--schedule", "@daily", "--tz", "UTC", "--from", "soon"],
            "--from: 'soon' is not an ISO 8601",
        ),
        (["--schedule", "@daily", "--tz", "UTC", "--count", "0"], "0 must be at least 1"),
        (
            ["--schedule", "@daily", "--tz", "UTC", "--from", "2026-01-02", "--to", "2026-01-01"],
            "--to must be later",
        ),
        (["--tz", "UTC"], "the following arguments are required: --schedule"),
    ],
)
def test_bad_input_exits_2_with_one_line(cli: Invoke, args: list[str], message: str) -> None:
    status, out, err = cli("preview", *args)
    assert (status, out) == (2, "")
    assert err.count("\n") == 1 and message in err


@pytest.mark.parametrize(
    ("schedule", "message"),
    [
        ("*/0 * * * *", "cron-Feld 1 (Minute): die Schrittweite 0 ist nicht erlaubt"),
        ("rrule:FREQ=FOO", "RRULE FREQ: 'FOO' ist keiner der Werte MINUTELY, HOURLY, DAILY, "
                           "WEEKLY, MONTHLY, YEARLY"),
        ("every 0m", "Intervall: das Intervall muss mindestens 1 Minute betragen"),
    ],
)  # fmt: skip
def test_a_bad_schedule_is_refused_in_the_users_language(
    cli: Invoke, monkeypatch: pytest.MonkeyPatch, schedule: str, message: str
) -> None:
    """A German terminal reads the schedule parser's refusal in German, as one line."""
    monkeypatch.setenv("LC_ALL", "de_DE.UTF-8")
    status, out, err = cli("preview", "--schedule", schedule, "--tz", "UTC")
    assert (status, out, err) == (2, "", f"coven preview: {message}\n")


def test_readable_table_is_localized_with_notes(capsys, monkeypatch) -> None:
    monkeypatch.setenv("LC_ALL", "de_DE.UTF-8")
    assert main(["preview", "--schedule", "30 2 * * *", "--tz", "America/New_York",
                 "--from", "2026-03-08", "--count", "1"]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "08.03.2026, 02:30:00 *" in out
    assert "Sonntag, 8. März 2026" in out  # the note's date, in German


def test_console_script_runs_for_real(tmp_path) -> None:
    env = {**os.environ, "COVEN_TZDB": "bundled"}
    done = subprocess.run(
        [sys.executable, "-m", "coven_core.cli.main", "preview", "--schedule", "every 2h",
         "--tz", "UTC", "--from", "2026-01-01T00:00Z", "--count", "2", "--json"],
        capture_output=True, text=True, env=env, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert [o["utc"] for o in json.loads(done.stdout)["occurrences"]] == [
        "2026-01-01T00:00:00Z", "2026-01-01T02:00:00Z"
    ]  # fmt: skip


def test_console_script_bad_zone_exits_2(tmp_path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "coven_core.cli.main", "preview", "--schedule", "@daily", "--tz", "Nowhere"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr.strip().count("\n") == 0 and "unknown time zone 'Nowhere'" in done.stderr
