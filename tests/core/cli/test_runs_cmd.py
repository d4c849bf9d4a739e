"""``coven runs [ROUTINE]`` and ``coven run show RUN``: the run story without the GUI (#21.3)."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest

from tests.core.cli.conftest import Coven
from tests.core.conftest import T0, Engine, minutes


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
