"""``coven routine add|list|show|edit|delete`` as issue #3 specifies them."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.core.cli.conftest import Coven, invoke

DAILY = ("--schedule", "30 2 * * *", "--tz", "America/New_York")


def test_add_then_show_json_has_the_stable_fields(coven: Coven) -> None:
    added = coven.add("backup", *DAILY, command=("/usr/bin/rsync", "-a", "--delete", "src", "dst"))
    shown = coven.json("routine", "show", "backup")
    assert shown == {key: value for key, value in added.items() if key != "warnings"}
    assert {k: shown[k] for k in ("name", "state", "schedule", "timezone", "revision")} == {
        "name": "backup", "state": "active", "schedule": "30 2 * * *",
        "timezone": "America/New_York", "revision": 1,
    }  # fmt: skip
    assert shown["command"] == ["/usr/bin/rsync", "-a", "--delete", "src", "dst"]


def test_the_command_after_dashes_is_kept_whole(coven: Coven) -> None:
    # Words that look like coven's own options belong to the command once they follow `--`.
    tail = ("/bin/echo", "--json", "--data-dir", "x", "--", "-h")
    shown = coven.add("echo", *DAILY, command=tail)
    assert shown["command"] == list(tail)


def test_data_dir_is_accepted_before_and_after_the_command(
    capsys: pytest.CaptureFixture[str], data_dir: Path
) -> None:
    status, _, err = invoke(
        capsys, "routine", "add", "late", *DAILY, "--data-dir", str(data_dir), "--", "/bin/true"
    )
    assert (status, err) == (0, "")
    status, out, _ = invoke(capsys, "--data-dir", str(data_dir), "routine", "list", "--json")
    assert [r["name"] for r in json.loads(out)["routines"]] == ["late"]
    status, out, _ = invoke(capsys, "routine", "--data-dir", str(data_dir), "show", "late")
    assert status == 0 and "America/New_York" in out


def test_every_option_lands_in_the_revision(coven: Coven, tmp_path: Path) -> None:
    shown = coven.add(
        "full", "--schedule", "every 2h", "--tz", "UTC", "--misfire", "skip_missed",
        "--grace", "1h30m", "--overlap", "queue_one", "--timeout", "15m", "--retries", "3",
        "--idempotent", "--cwd", str(tmp_path), "--env", "B=2", "--env", "A=secret=1",
        "--start", "2026-01-01T00:30",
    )  # fmt: skip
    assert shown["misfire"] == "skip_missed" and shown["overlap"] == "queue_one"
    assert (shown["grace_seconds"], shown["timeout_seconds"]) == (5400, 900)
    assert (shown["retries"], shown["idempotent"], shown["cwd"]) == (3, True, str(tmp_path))
    assert shown["env"] == ["A", "B"]  # names only: values may be secret
    assert shown["next_due"][13:] == ":30:00Z" and int(shown["next_due"][11:13]) % 2 == 0


def test_defaults(coven: Coven) -> None:
    shown = coven.add("plain", *DAILY)
    assert (shown["misfire"], shown["grace_seconds"], shown["overlap"]) == (
        "latest_only",
        None,
        "skip",
    )
    assert (shown["timeout_seconds"], shown["retries"], shown["idempotent"]) == (None, 0, False)
    assert (shown["cwd"], shown["env"], shown["zone_source"]) == (None, [], "explicit")


def test_local_zone_is_stored_as_the_hosts_iana_key(
    coven: Coven, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TZ", "Europe/Berlin")
    shown = coven.add("here", "--schedule", "@daily", "--tz", "local")
    assert shown["timezone"] == "Europe/Berlin"
    assert shown["zone_source"].startswith("local")


def test_list_is_sorted_by_name_and_readable(coven: Coven) -> None:
    coven.new_store()
    status, out, _ = coven("routine", "list")
    assert status == 0 and "No routines yet" in out
    coven.add("zeta", *DAILY)
    coven.add("alpha", "--schedule", "every 15m", "--tz", "UTC")
    assert [r["name"] for r in coven.json("routine", "list")["routines"]] == ["alpha", "zeta"]
    status, out, _ = coven("routine", "list")
    header, first, second = out.splitlines()
    assert header.split() == ["Name", "State", "Schedule", "Zone", "Next", "Last"]
    assert first.startswith("alpha ") and second.startswith("zeta ")
    assert first.index("active") == second.index("active") == header.index("State")


def test_list_says_which_routines_are_on_trial(coven: Coven) -> None:
    coven.add("sync", *DAILY, "--shadow")
    coven.add("backup", *DAILY)
    _status, out, _ = coven("routine", "list")
    states = {line.split()[0]: line.split()[1:3] for line in out.splitlines()[1:]}
    assert states["sync"] == ["active", "(shadow)"] and states["backup"][0] == "active"
    coven.json("routine", "edit", "sync", "--live")
    _status, out, _ = coven("routine", "list")
    assert "(shadow)" not in out


def test_show_is_readable(coven: Coven) -> None:
    coven.add(
        "backup", *DAILY, "--grace", "15m", "--env", "TOKEN=hunter2", command=("backup", "a b")
    )
    status, out, _ = coven("routine", "show", "backup")
    assert status == 0
    assert "Time zone:    America/New_York (explicit)" in out
    assert "grace 15m" in out and "Command:      backup 'a b'" in out
    assert "TOKEN" in out and "hunter2" not in out


def test_edit_changes_only_what_is_given(coven: Coven) -> None:
    before = coven.add("backup", *DAILY, "--retries", "1", "--idempotent")
    after = coven.json("routine", "edit", "backup", "--grace", "5m", "--no-idempotent")
    assert after["revision"] == 2
    assert (after["grace_seconds"], after["idempotent"]) == (300, False)
    unchanged = ("schedule", "timezone", "retries", "command", "misfire", "overlap")
    assert {k: after[k] for k in unchanged} == {k: before[k] for k in unchanged}


def test_edit_replaces_the_command_and_the_zone(coven: Coven, monkeypatch) -> None:
    coven.add("backup", *DAILY)
    after = coven.json("routine", "edit", "backup", "--", "/bin/echo", "new")
    assert after["command"] == ["/bin/echo", "new"] and after["revision"] == 2
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    after = coven.json("routine", "edit", "backup", "--tz", "local", "--grace", "none")
    assert (after["timezone"], after["grace_seconds"]) == ("Asia/Tokyo", None)
    assert after["zone_source"].startswith("local")
    after = coven.json("routine", "edit", "backup", "--tz", "UTC")
    assert (after["timezone"], after["zone_source"], after["revision"]) == ("UTC", "explicit", 4)


def test_delete_keeps_history_but_frees_the_name(coven: Coven) -> None:
    first = coven.add("backup", *DAILY)
    deleted = coven.json("routine", "delete", "backup")
    assert deleted == {"id": first["id"], "name": "backup", "state": "deleted"}
    assert coven.json("routine", "list") == {"routines": []}
    coven.refuses("routine", "show", "backup", message="no routine named 'backup'")
    assert coven.add("backup", *DAILY)["id"] != first["id"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["routine", "add", "backup", *DAILY, "--", "/bin/true"], "a routine named 'backup' already exists"),
        (["routine", "add", "new", "--schedule", "0 0 32 * *", "--tz", "UTC", "--", "x"], "32 is out of range 1-31"),
        (["routine", "add", "new", "--schedule", "@daily", "--tz", "Mars/Olympus", "--", "x"], "unknown time zone 'Mars/Olympus'"),
        (["routine", "add", "new", *DAILY, "--grace", "5 minutes", "--", "x"], "--grace: '5 minutes' is not a duration like 90s, 15m, 2h or 1d"),
        (["routine", "add", "new", *DAILY, "--timeout", "soon", "--", "x"], "--timeout: 'soon' is not a duration"),
        (["routine", "add", "new", *DAILY], "the command is empty"),
        (["routine", "add", "new", *DAILY, "--"], "the command is empty"),
        (["routine", "add", "new", *DAILY, "--", ""], "the command is empty"),
        (["routine", "add", "new", *DAILY, "--env", "1X=2", "--", "x"], "'1X' is not a valid variable name"),
        (["routine", "add", "new", *DAILY, "--env", "NOVALUE", "--", "x"], "'NOVALUE' is not KEY=VALUE"),
        (["routine", "add", "new", *DAILY, "--env", "A=1", "--env", "A=2", "--", "x"], "--env: A is given twice"),
        (["routine", "add", "new", *DAILY, "--misfire", "always", "--", "x"], "invalid choice: 'always'"),
        (["routine", "add", "new", *DAILY, "--retries", "-1", "--", "x"], "-1 must be at least 0"),
        (["routine", "add", "new", *DAILY, "--cwd", "/etc/passwd", "--", "x"], "'/etc/passwd' is not a directory"),
        (["routine", "add", "new", *DAILY, "--start", "soon", "--", "x"], "--start: 'soon' is not an ISO 8601"),
        (["routine", "add", "new", "--tz", "UTC", "--", "x"], "--schedule is needed (a routine that only another one triggers needs --after"),
        (["routine", "add", " ", *DAILY, "--", "x"], "a routine needs a name"),
        (["routine", "show", "nobody"], "no routine named 'nobody'"),
        (["routine", "edit", "nobody", "--grace", "5m"], "no routine named 'nobody'"),
        (["routine", "edit", "backup"], "nothing to change"),
        (["routine", "edit", "backup", "--schedule", "rrule:FREQ=YEARLY;BYWEEKNO=1"], "unsupported RRULE part BYWEEKNO"),
        (["routine", "edit", "backup", "--tz", "Nowhere"], "unknown time zone 'Nowhere'"),
        (["routine", "edit", "backup", "--"], "the command is empty"),
        (["routine", "delete", "nobody"], "no routine named 'nobody'"),
        (["routine", "list", "--", "x"], "unrecognized arguments: -- x"),
        (["routine"], "the following arguments are required: ACTION"),
    ],
)  # fmt: skip
def test_bad_input_exits_2_and_changes_nothing(coven: Coven, args: list[str], message: str) -> None:
    coven.add("backup", *DAILY)
    coven.refuses(*args, message=message)


def test_the_refusal_names_the_subcommand(coven: Coven) -> None:
    coven.new_store()
    err = coven.refuses("routine", "show", "nobody", message="nobody")
    assert err.startswith("coven routine show: ")


def test_console_script_adds_and_shows_for_real(data_dir: Path) -> None:
    def coven(*args: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "coven_core.cli.main", "--data-dir", str(data_dir), *args]
        return subprocess.run(
            command, capture_output=True, text=True, env=dict(os.environ), check=False
        )

    added = coven("routine", "add", "nightly", *DAILY, "--json", "--", "/bin/echo", "hi")
    assert added.returncode == 0, added.stderr
    shown = coven("routine", "show", "nightly", "--json")
    assert shown.returncode == 0, shown.stderr
    assert {**json.loads(shown.stdout), "warnings": []} == json.loads(added.stdout)
    assert json.loads(shown.stdout)["command"] == ["/bin/echo", "hi"]
    again = coven("routine", "add", "nightly", *DAILY, "--", "/bin/echo")
    assert (again.returncode, again.stdout) == (2, "")
    assert again.stderr.count("\n") == 1 and "already exists" in again.stderr


# -- what the command misses now (issue 19, part 3) ------------------------------------------
MISSING_WARNING = "; the routine is stored, and its runs fail until it exists\n"


def test_add_warns_when_the_program_is_not_on_path_and_stores_it(coven: Coven) -> None:
    status, out, err = coven("routine", "add", "ghost", *DAILY, "--", "no-such-program-c0ven")
    assert (status, out.splitlines()[0]) == (0, "Added routine 'ghost'.")
    assert err == (
        "coven routine add: warning: the command 'no-such-program-c0ven' is not found on PATH "
        "now" + MISSING_WARNING
    )
    assert coven.json("routine", "show", "ghost")["command"] == ["no-such-program-c0ven"]


def test_add_json_lists_every_warning(coven: Coven, tmp_path: Path) -> None:
    gone = tmp_path / "unmounted"
    added = coven.json("routine", "add", "both", *DAILY, "--cwd", str(gone), "--",
                       str(tmp_path / "bin" / "tool"))  # fmt: skip
    assert added["warnings"] == [
        f"the command {tmp_path / 'bin' / 'tool'} does not exist now (or is not executable)",
        f"the working directory {gone} does not exist now",
    ]
    assert added["cwd"] == str(gone)


def test_no_warning_for_what_exists_or_a_shell_command(coven: Coven, tmp_path: Path) -> None:
    assert coven.add("plain", *DAILY, command=("true",))["warnings"] == []
    assert (
        coven.add("abs", *DAILY, "--cwd", str(tmp_path), command=("/bin/true",))["warnings"] == []
    )
    assert (
        coven.add("sh", *DAILY, "--shell", command=("no-such-program-c0ven | x",))["warnings"] == []
    )
    status, _out, err = coven("routine", "add", "quiet", *DAILY, "--", "true")
    assert (status, err) == (0, "")


def test_the_routines_own_path_is_where_the_program_is_looked_up(
    coven: Coven, tmp_path: Path
) -> None:
    tool = tmp_path / "tool"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o755)
    added = coven.add("own", *DAILY, "--env", f"PATH={tmp_path}", command=("tool",))
    assert added["warnings"] == []


def test_edit_warns_about_the_command_it_stores(coven: Coven, tmp_path: Path) -> None:
    coven.add("backup", *DAILY)
    status, _out, err = coven("routine", "edit", "backup", "--cwd", str(tmp_path / "gone"))
    assert status == 0
    assert err == (
        f"coven routine edit: warning: the working directory {tmp_path / 'gone'} does not exist "
        "now" + MISSING_WARNING
    )
    assert coven.json("routine", "show", "backup")["revision"] == 2


def test_runner_options_are_stored(coven: Coven) -> None:
    shown = coven.add(
        "sh", *DAILY, "--shell", "--stop-grace", "30s", "--quarantine-after", "5",
        command=("echo $HOME",),
    )  # fmt: skip
    assert (shown["shell"], shown["stop_grace_seconds"], shown["quarantine_after"]) == (
        True,
        30.0,
        5,
    )
