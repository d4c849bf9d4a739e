"""Every input a person can give is bounded and refused by name, never a traceback (issue 19).

The bounds themselves live in ``coven_core.notation.limits``; these tests type what a person could."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tests.core.cli.conftest import Coven, Invoke

EVERY = ("--schedule", "every 1d", "--tz", "UTC")
HUGE = "9" * 23


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--schedule", "every 9999999999d", "--tz", "UTC"), "longer than 100 years"),
        (("--schedule", f"every {'9' * 5000}m", "--tz", "UTC"), "longer than 100 years"),
        (("--schedule", "every 36526d", "--tz", "UTC"), "longer than 100 years"),
        ((*EVERY, "--grace", f"{HUGE}d"), "--grace: '99999999999999999999999d' is longer"),
        ((*EVERY, "--stop-grace", f"{HUGE}d"), "--stop-grace: '9999999999"),
        ((*EVERY, "--timeout", "36526d"), "--timeout: '36526d' is longer than 100 years"),
        ((*EVERY, "--retries", HUGE), "--retries: 99999999999999999999 must be at most 100"),
        ((*EVERY, "--retries", "101"), "--retries: 101 must be at most 100"),
        ((*EVERY, "--quarantine-after", HUGE), "--quarantine-after: 9999"),
        ((*EVERY, "--start", "0001-01-01T00:00"), "--start: the year 1 is outside 1970..9000"),
        ((*EVERY, "--start", "9999-12-30T00:00"), "--start: the year 9999 is outside 1970..9000"),
        (("--schedule", "once 9999-12-31T23:59", "--tz", "UTC"), "once: the year 9999"),
        (("--schedule", "rrule:FREQ=DAILY;UNTIL=99991231", "--tz", "UTC"), "UNTIL: the year"),
        (("--schedule", f"*/{HUGE} * * * *", "--tz", "UTC"), "the step must be at most 1000"),
        (("--schedule", "every ١m", "--tz", "UTC"), "'every ١m' is not like 'every 30m'"),
        ((*EVERY, "--retries", "٣"), "--retries: '٣' is not a whole number (digits 0-9)"),
        ((*EVERY, "--grace", "١h"), "--grace: '١h' is not a duration"),
    ],
)
def test_add_refuses_what_is_past_a_bound_by_name(
    coven: Coven, args: tuple[str, ...], message: str
) -> None:
    coven.add("kept", *EVERY)
    coven.refuses("routine", "add", "new", *args, "--", "/bin/true", message=message)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--count", "100000000"), "--count: 100000000 must be at most 10000"),
        (("--count", HUGE), "--count: 99999999999999999999 must be at most 10000"),
        (("--from", "0001-01-01T00:00"), "--from: the year 1 is outside 1970..9000"),
        (("--from", "9999-12-31T23:59"), "--from: the year 9999 is outside 1970..9000"),
        (("--to", "9999-12-31T23:59"), "--to: the year 9999 is outside 1970..9000"),
    ],
)
def test_preview_refuses_what_is_past_a_bound_by_name(
    coven: Coven, args: tuple[str, ...], message: str
) -> None:
    coven.add("kept", *EVERY)
    coven.refuses("preview", *EVERY, *args, message=message)


@pytest.mark.parametrize(
    "args",
    [
        ("history", "kept", "--limit", HUGE),
        ("audit", "--limit", "10001"),
        ("explain", "kept", "--count", HUGE),
    ],
)
def test_listing_commands_cap_how_many(coven: Coven, args: tuple[str, ...]) -> None:
    coven.add("kept", *EVERY)
    coven.refuses(*args, message="must be at most 10000")


def test_a_range_given_by_its_end_alone_lists_at_most_the_cap_and_says_so(coven: Coven) -> None:
    # Found by the property test: daily moments to the year 9000 grew to 22 GB.
    asked = ("preview", "--schedule", "30 2 * * *", "--tz", "UTC", "--to", "9000-12-31T23:59")
    shown = coven.json(*asked)
    assert (len(shown["occurrences"]), shown["capped"]) == (10_000, True)
    status, out, _ = coven(*asked)
    assert status == 0 and "Only the first 10,000 moments" in out
    near = coven.json("preview", "--schedule", "@daily", "--tz", "UTC", "--to", "2040-01-01")
    assert not near["capped"]


def test_explain_stops_at_the_end_of_planning(coven: Coven) -> None:
    # The latest start and the longest interval: explain ends in 9000, it does not overflow.
    coven.add("late", "--schedule", "every 36525d", "--tz", "UTC", "--start", "9000-12-30T00:00")
    moments = coven.json("explain", "late", "--count", "10000")["occurrences"]
    assert [m["utc"] for m in moments] == ["9000-12-30T00:00:00Z"]


def test_a_step_past_its_field_still_keeps_the_first_value(coven: Coven) -> None:
    shown = coven.json("preview", "--schedule", "*/90 * * * *", "--tz", "UTC", "--count", "2")
    assert all(m["utc"][14:16] == "00" for m in shown["occurrences"])


@pytest.mark.parametrize(
    ("parts", "message"),
    [
        (("a" * 256,), "a name of 256 bytes"),
        (("ä" * 128,), "a name of 256 bytes"),
        (("a" * 200, "b" * 200, "c" * 200), "SQLite needs it to be at most 480"),
    ],
)
def test_a_data_dir_no_filesystem_can_hold_is_refused_by_name(
    cli: Invoke, tmp_path: Path, parts: tuple[str, ...], message: str
) -> None:
    status, out, err = cli("--data-dir", str(tmp_path.joinpath(*parts)), "routine", "list")
    assert (status, out) == (2, "") and err.count("\n") == 1, err
    assert message in err and "--data-dir" in err
    assert list(tmp_path.iterdir()) == []


READING = [
    ("routine", "list"), ("routine", "show", "a"), ("status",), ("history", "a"),
    ("attention",), ("audit",), ("audit", "verify"), ("doctor",), ("inspect", "x"),
    ("explain", "a"), ("list", "--state", "due"), ("config",),
    ("pause", "a"), ("routine", "delete", "a"), ("run-now", "a"), ("stop", "r"), ("runs",),
    ("run", "show", "r"), ("export", "systemd", "--out", "units"),
]  # fmt: skip


@pytest.mark.parametrize("args", READING, ids=" ".join)
def test_a_command_on_a_missing_store_says_so_and_creates_nothing(
    coven: Coven, data_dir: Path, args: tuple[str, ...]
) -> None:
    coven.refuses(*args, message=f"no Coven store in {data_dir} yet: add a routine")
    assert not data_dir.exists()


def test_import_apply_makes_the_store_its_dry_run_does_not(
    coven: Coven, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", io.StringIO("0 5 * * * /bin/true\n"))
    coven.json("import", "crontab", "--tz", "UTC")
    assert not data_dir.exists()
    monkeypatch.setattr("sys.stdin", io.StringIO("0 5 * * * /bin/true\n"))
    coven.json("import", "crontab", "--tz", "UTC", "--apply")
    assert [r["name"] for r in coven.json("routine", "list")["routines"]] == ["true"]


def test_an_empty_store_file_is_refused_as_damaged(coven: Coven, data_dir: Path) -> None:
    data_dir.mkdir(mode=0o700)
    (data_dir / "coven.db").touch(mode=0o600)
    for args in (("routine", "list"), ("routine", "add", "a", *EVERY, "--", "/bin/true")):
        status, out, err = coven(*args)
        assert (status, out) == (2, "") and err.count("\n") == 1, err
        assert "coven.db is empty: it is not a Coven store (damaged?)" in err
        assert "move it away: mv " in err
    assert [p.name for p in data_dir.iterdir()] == ["coven.db"]
    assert (data_dir / "coven.db").stat().st_size == 0


def test_deleting_an_unknown_routine_is_refused_and_audited(coven: Coven) -> None:
    coven.add("kept", *EVERY)
    coven.refuses("routine", "delete", "nope", message="no routine named 'nope'")
    latest = coven.json("audit")["entries"][0]
    assert (latest["action"], latest["target"]) == ("routine.delete", "nope")
    assert latest["result"].startswith("refused: no routine named")


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("a\nb", "contains U+000A"),
        ("tab\there", "contains U+0009"),
        ("evil\u202egnp.exe", "contains U+202E RIGHT-TO-LEFT OVERRIDE"),
        ("iso\u2066late", "contains U+2066 LEFT-TO-RIGHT ISOLATE"),
        ("zero\u200bwidth", "contains U+200B ZERO WIDTH SPACE"),
        ("x" * 10_000, "at most 64 characters (this one has 10000)"),
        (" backup", "starts or ends with a space"),
        ("backup\u3000", "starts or ends with a space"),
    ],
)
def test_a_name_outside_the_rule_is_refused_by_name(coven: Coven, name: str, message: str) -> None:
    coven.add("kept", *EVERY)
    coven.refuses("routine", "add", name, *EVERY, "--", "/bin/true", message=message)


def test_letters_of_any_script_make_a_name(coven: Coven) -> None:
    name = "Sicherung – täglich 日本 نسخ"[:64]
    assert coven.add(name, *EVERY)["name"] == name


@pytest.mark.parametrize(
    ("schedule", "zone", "message"),
    [
        ("once 2020-01-01T00:00", "UTC", "can never run: its time has passed in UTC"),
        ("rrule:FREQ=DAILY;UNTIL=20200101", "UTC", "can never run: its last time (UNTIL"),
        (
            "once 2090-03-12T02:30",
            "America/New_York",
            "can never run: 2090-03-12T02:30 does not exist in America/New_York",
        ),
    ],
)
def test_a_schedule_that_can_never_run_is_refused_at_add_and_edit(
    coven: Coven, schedule: str, zone: str, message: str
) -> None:
    coven.add("kept", "--schedule", "once 2090-03-12T03:30", "--tz", zone)
    coven.refuses(
        "routine", "add", "new", "--schedule", schedule, "--tz", zone, "--", "/bin/true",
        message=message,
    )  # fmt: skip
    coven.refuses("routine", "edit", "kept", "--schedule", schedule, message=message)
