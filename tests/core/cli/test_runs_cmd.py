"""``coven runs [ROUTINE]`` and ``coven run show RUN``: the run story without the GUI (#21.3)."""

from __future__ import annotations

import re
from datetime import timedelta
from pathlib import Path

import pytest

from coven_core.clock import VirtualClock
from tests.core.cli.conftest import Coven
from tests.core.conftest import T0, Engine, make_engine, minutes


def test_runs_lists_newest_first_and_run_show_tells_one(coven: Coven, engine: Engine) -> None:
    engine.add("backup", "*/5 * * * *", retries=1)
    engine.add("sync", "1 12 * * *")
    engine.runtime.auto_exit = 2
    engine.run_until(T0 + minutes(6))
    listed = coven.json("runs", "--limit", "5")["runs"]
    assert [r["planned_utc"] for r in listed] == sorted(
        (r["planned_utc"] for r in listed), reverse=True
    )
    only = coven.json("runs", "sync")["runs"]
    assert [(r["routine"], r["outcome"], r["reason"]) for r in only] == [
        ("sync", "failed", "Failed with exit 2")
    ]
    shown = coven.json("run", "show", only[0]["run_id"])
    assert shown["command"] == "/bin/true" and shown["row"]["exit_code"] == 2
    status, out, err = coven("run", "show", only[0]["run_id"])
    assert status == 0 and err == "" and "Failed with exit 2" in out


def test_run_show_names_an_unknown_run(coven: Coven, engine: Engine) -> None:
    status, out, err = coven("run", "show", "nope")
    assert status == 2 and out == "" and "no run or occurrence 'nope'" in err


def test_runs_and_run_show_speak_the_users_language(
    coven: Coven, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In German the headers and labels are German, as the Runs window's; the engine's
    words for outcomes and states stay as every listing prints them."""
    engine.add("sync", "1 12 * * *")
    engine.runtime.auto_exit = 2
    engine.run_until(T0 + minutes(6))
    run_id = coven.json("runs", "sync")["runs"][0]["run_id"]
    monkeypatch.setenv("LC_ALL", "de_DE.UTF-8")
    status, listed, _ = coven("runs", "sync")
    assert status == 0
    assert listed.splitlines()[0].split() == ["UTC", "Routine", "Ergebnis", "Ausführung",
                                              "Dauer", "Was", "geschah"]  # fmt: skip
    assert " failed " in listed.splitlines()[1]
    status, shown, _ = coven("run", "show", run_id)
    lines = shown.splitlines()
    assert status == 0 and lines[1].startswith("geplant ")
    assert "Befehl: /bin/true" in lines and "Verzeichnis: —" in lines
    assert "Versuch 1: settled, Exit 2, action_failed" in lines


def test_runs_tells_a_long_run_in_the_command_lines_own_notation(
    coven: Coven, engine: Engine
) -> None:
    engine.add("sync", "1 12 * * *")
    engine.runtime.auto_exit = None
    engine.run_until(T0 + minutes(2))
    (launch,) = engine.runtime.launches
    engine.clock.advance(timedelta(hours=1, minutes=2, seconds=5))
    engine.runtime.finish(launch, 0)
    engine.run_until(T0 + minutes(70))
    status, listed, _ = coven("runs", "sync")
    assert status == 0 and re.search(r" 1h\dm\d+s ", listed.splitlines()[1]), listed


def test_runs_says_a_run_was_asked_for_by_hand(
    coven: Coven, engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Its UTC column is when someone asked, which reads like a moment of the schedule: its
    What happened says so first, as the Runs window's Planned column does."""
    engine.add("sync", "1 12 * * *")
    engine.operator.run_now("sync")
    engine.run_until(T0 + minutes(2))
    status, listed, _ = coven("runs", "sync")
    lines = listed.splitlines()
    assert status == 0 and len(lines) == 3
    assert lines[1].endswith("By hand · Succeeded") or lines[2].endswith("By hand · Succeeded")
    assert sum("By hand" in line for line in lines) == 1  # the moment of 12:01 is not
    monkeypatch.setenv("LC_ALL", "de_DE.UTF-8")
    assert "Von Hand · Erfolgreich" in coven("runs", "sync")[1]


def test_runs_says_why_a_run_started_hours_after_its_moment(
    coven: Coven, engine: Engine, data_dir: Path, clock: VirtualClock
) -> None:
    """12:30 passed while the app was off; it ran once the app was back, hours late. Its
    line says why, as the Runs window's What happened does."""
    engine.add("daily", "30 12 * * *")
    engine.run_until(T0 + minutes(12))
    engine.scheduler.shutdown()  # the app quits
    clock.advance(timedelta(hours=3))
    again = make_engine(data_dir, clock)
    again.run_until(clock.now_utc() + minutes(1))
    again.store.close()
    status, listed, _ = coven("runs", "daily")
    assert status == 0
    assert listed.splitlines()[1].endswith(
        "Succeeded · Caught up: its moment passed while Coven was not running"
    )
