"""The policy options of ``coven routine add|edit`` (issue #23) and how the CLI tells their
decisions (``history``, ``inspect``)."""

from __future__ import annotations

from datetime import date, timedelta

from tests.core.cli.conftest import Coven
from tests.core.conftest import T0, Engine

DAILY = ("--schedule", "30 2 * * *", "--tz", "America/New_York")


def test_except_dates_are_kept_in_order_once_each_and_shown(coven: Coven) -> None:
    shown = coven.add(
        "backup", *DAILY, "--except", "2026-12-25", "--except", "2026-12-24",
        "--except", "2026-12-25",
    )  # fmt: skip
    assert shown["except_dates"] == ["2026-12-24", "2026-12-25"]
    _status, out, _err = coven("routine", "show", "backup")
    assert "2026-12-24, 2026-12-25" in out


def test_edit_replaces_the_except_dates_and_none_clears_them(coven: Coven) -> None:
    coven.add("backup", *DAILY, "--except", "2026-12-24")
    edited = coven.json("routine", "edit", "backup", "--except", "2027-01-01")
    assert (edited["except_dates"], edited["revision"]) == (["2027-01-01"], 2)
    assert coven.json("routine", "edit", "backup", "--except", "none")["except_dates"] == []


def test_a_bad_except_date_is_refused_by_name(coven: Coven) -> None:
    coven.refuses(
        "routine", "add", "x", *DAILY, "--except", "24.12.2026", "--", "/bin/true",
        message="'24.12.2026' is not a date like 2026-12-24",
    )  # fmt: skip


def test_preview_lists_excluded_moments_as_skipped(coven: Coven) -> None:
    doc = coven.json(
        "preview", "--schedule", "rrule:FREQ=MONTHLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1",
        "--tz", "Europe/Berlin", "--start", "2026-01-01T18:00", "--from", "2026-01-01",
        "--count", "3", "--except", "2026-02-27",
    )  # fmt: skip
    assert [(m["local"], m["disposition"], m["reason"]) for m in doc["occurrences"]] == [
        ("2026-01-30T18:00:00", "planned", None),
        ("2026-02-27T18:00:00", "skipped", "excluded_date"),
        ("2026-03-31T18:00:00", "planned", None),
    ]
    assert doc["except_dates"] == ["2026-02-27"]


def test_history_and_inspect_say_why_a_moment_was_excluded(
    on_engine_clock: Engine, coven: Coven
) -> None:
    engine = on_engine_clock
    engine.add("daily", "0 13 * * *", except_dates=(date(2026, 3, 1),))
    engine.run_until(T0 + timedelta(hours=2))
    _status, out, _err = coven("history", "daily")
    assert "excluded_date · Its date, 2026-03-01, is one of the routine's exclusion dates." in out
    [row] = coven.json("history", "daily")["occurrences"]
    assert (row["reason"], row["decision"]) == ("excluded_date", {"date": "2026-03-01"})
    _status, out, _err = coven("inspect", row["occurrence_id"])
    assert out.startswith("Its date, 2026-03-01, is one of the routine's exclusion dates.\n\n")


def test_shadow_then_live_each_make_a_revision(coven: Coven) -> None:
    shown = coven.add("trial", *DAILY, "--shadow")
    assert (shown["shadow"], shown["revision"]) == (True, 1)
    _status, out, _err = coven("routine", "show", "trial")
    assert "shadow: decided as if live, never started" in out
    live = coven.json("routine", "edit", "trial", "--live")
    assert (live["shadow"], live["revision"]) == (False, 2)
    again = coven.json("routine", "edit", "trial", "--shadow")
    assert (again["shadow"], coven.json("routine", "edit", "trial", "--no-shadow")["shadow"]) == (
        True, False,
    )  # fmt: skip


def test_history_says_what_a_trial_would_have_done(on_engine_clock: Engine, coven: Coven) -> None:
    engine = on_engine_clock
    engine.add("trial", "0 13 * * *", shadow=True)
    engine.run_until(T0 + timedelta(hours=2))
    _status, out, _err = coven("history", "trial")
    assert "shadowed" in out
    assert "would_run · A trial: it would have run /bin/true; nothing was started." in out
    assert engine.runtime.launches == []


def test_budgets_are_set_shown_and_cleared(coven: Coven) -> None:
    shown = coven.add("b", *DAILY, "--max-runs-per-day", "3", "--max-runtime-per-day", "1h30m")
    assert (shown["max_runs_per_day"], shown["max_runtime_per_day_seconds"]) == (3, 5400)
    _status, out, _err = coven("routine", "show", "b")
    assert "3 runs a day · 1h30m of run time a day" in out
    cleared = coven.json("routine", "edit", "b", "--max-runs-per-day", "none")
    assert (cleared["max_runs_per_day"], cleared["max_runtime_per_day_seconds"]) == (None, 5400)
    coven.refuses("routine", "edit", "b", "--max-runs-per-day", "0", message="0 must be at least 1")


def test_history_says_whose_budget_was_used(on_engine_clock: Engine, coven: Coven) -> None:
    engine = on_engine_clock
    engine.add("hourly", "0 * * * *", max_runs_per_day=1)
    engine.run_until(T0 + timedelta(hours=1, minutes=5))
    _status, out, _err = coven("history", "hourly")
    assert "budget_exhausted · The budget of 2026-03-01 was used up: 1 of 1 run." in out


def test_cooldown_is_set_and_shown(coven: Coven) -> None:
    shown = coven.add("c", *DAILY, "--cooldown", "15m", "--cooldown-max", "2h")
    assert (shown["cooldown_seconds"], shown["cooldown_max_seconds"]) == (900, 7200)
    _status, out, _err = coven("routine", "show", "c")
    assert "15m after a failure, doubling up to 2h" in out
    assert coven.json("routine", "edit", "c", "--cooldown", "none")["cooldown_seconds"] is None


def test_group_is_set_and_cleared(coven: Coven) -> None:
    assert coven.add("g", *DAILY, "--group", "disk")["group"] == "disk"
    _status, out, _err = coven("routine", "show", "g")
    assert "disk (one routine of the group runs at a time)" in out
    assert coven.json("routine", "edit", "g", "--group", "none")["group"] is None


def test_max_active_is_shown_and_set_in_config(coven: Coven) -> None:
    coven.add("backup", *DAILY)  # a read on a missing store refuses (issue 19): make one
    shown = {s["name"]: s for s in coven.json("config")["settings"]}
    assert (shown["max-active"]["value"], shown["max-active"]["default"]) == ("4", True)
    assert coven.json("config", "set", "max-active", "8")["value"] == "8"
    coven.refuses("config", "set", "max-active", "0", message="max-active must be at least 1")


def test_after_sets_a_chain_and_refuses_a_loop_by_name(coven: Coven) -> None:
    coven.add("backup", *DAILY)
    shown = coven.add("verify", *DAILY, "--after", "backup:finished")
    assert (shown["after"], shown["after_outcome"]) == ("backup", "finished")
    _status, out, _err = coven("routine", "show", "verify")
    assert "when a run of backup ends, however it ends" in out
    coven.refuses("routine", "edit", "backup", "--after", "verify",
                  message="a chain cannot loop: backup → verify → backup", status=2)  # fmt: skip
    assert coven.json("routine", "edit", "verify", "--after", "none")["after"] is None


def test_conditions_and_keep_awake_are_set_shown_and_cleared(coven: Coven) -> None:
    shown = coven.add("c", *DAILY, "--on-ac-power", "--when-online", "--keep-awake")
    assert (shown["on_ac_power"], shown["when_online"], shown["keep_awake"]) == (True, True, True)
    _status, out, _err = coven("routine", "show", "c")
    assert "on AC power · when online (waits within its grace)" in out
    assert "the machine stays awake while it runs" in out
    edited = coven.json("routine", "edit", "c", "--no-on-ac-power", "--no-keep-awake")
    assert (edited["on_ac_power"], edited["when_online"], edited["keep_awake"]) == (
        False, True, False,
    )  # fmt: skip


def test_a_chained_routine_needs_no_schedule_and_says_after_what(coven: Coven) -> None:
    coven.add("backup", *DAILY)
    added = coven.add("verify", "--after", "backup")
    assert (added["schedule"], added["after"]) == ("after", "backup")
    _status, out, _err = coven("routine", "list")
    assert [line.split()[:3] for line in out.splitlines() if line.startswith("verify")] == [
        ["verify", "active", "after"]
    ]
    assert "after backup" in out
    _status, out, _err = coven("routine", "show", "verify")
    assert "Next:         after backup" in out
    _status, out, _err = coven("explain", "verify")
    assert "it runs each time a run of backup succeeds" in out
    coven.refuses(
        "routine", "add", "lonely", "--", "/bin/true",
        message="--schedule and --tz are needed (a routine that only another one triggers "
        "needs --after ROUTINE instead)",
    )  # fmt: skip


def test_history_and_inspect_say_which_condition_was_unmet(
    on_engine_clock: Engine, coven: Coven
) -> None:
    from coven_core.host import HostState, HostWatch, Network, Power

    engine = on_engine_clock
    state = HostState(Power.BATTERY, Network.ONLINE, "upower", "networkmanager")
    engine.scheduler.host = HostWatch(state)
    engine.add("daily", "0 13 * * *", on_ac_power=True, grace=timedelta(minutes=30))
    engine.run_until(T0 + timedelta(hours=2))
    _status, out, _err = coven("history", "daily")
    assert (
        "condition_unmet · Its conditions were not met through its grace: the machine was on "
        "battery power (upower)."
    ) in out
    [row] = coven.json("history", "daily")["occurrences"]
    assert row["decision"]["unmet"] == ["on_ac_power"]
    _status, out, _err = coven("inspect", row["occurrence_id"])
    assert out.startswith("Its conditions were not met through its grace")
