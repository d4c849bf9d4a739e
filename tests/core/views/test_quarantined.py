"""Quarantined routines with the failures that tripped the breaker (DESIGN §6)."""

from __future__ import annotations

from pathlib import Path

from coven_core.views.quarantined import last_lines, quarantined
from tests.core.conftest import T0, Engine, minutes


def test_a_tripped_breaker_lists_the_routine_with_its_failures(engine: Engine) -> None:
    engine.runtime.auto_exit = 1
    engine.add("fetch", "*/15 * * * *")
    engine.add("fine", "@hourly")
    engine.run_until(T0 + minutes(50))

    (found,) = quarantined(engine.store)
    assert (found.name, found.consecutive_failures) == ("fetch", 3)
    assert found.reason is not None and "3" in found.reason
    assert [f.disposition for f in found.failures] == ["failed"] * 3
    assert [f.failure_class for f in found.failures] == ["action_failed"] * 3
    assert found.failures[0].message == "exited with status 1"
    assert found.failures[0].scheduled_utc > found.failures[-1].scheduled_utc  # newest first
    assert found.since == T0 + minutes(30)  # 12:00, 12:15, 12:30 failed


def test_released_routines_are_not_listed(engine: Engine) -> None:
    engine.runtime.auto_exit = 1
    engine.add("fetch", "*/15 * * * *")
    engine.run_until(T0 + minutes(50))
    engine.operator.release("fetch")
    assert quarantined(engine.store) == []


def test_a_routine_quarantined_by_hand_has_no_failures_to_show(engine: Engine) -> None:
    engine.add("fetch", "@hourly")
    engine.operator.quarantine("fetch", "the server is down")
    (found,) = quarantined(engine.store)
    assert (found.reason, found.failures, found.consecutive_failures) == (
        "the server is down",
        [],
        0,
    )


def test_what_the_command_said_last_prefers_stderr(tmp_path: Path) -> None:
    (tmp_path / "stdout").write_text("fetching\n", encoding="utf-8")
    (tmp_path / "stderr").write_text("a\nb\n\nc\nAuthorization failure\n", encoding="utf-8")
    assert last_lines(tmp_path) == "b\nc\nAuthorization failure"
    (tmp_path / "stderr").write_text("", encoding="utf-8")
    assert last_lines(tmp_path) == "fetching"
    assert last_lines(None) == last_lines(tmp_path / "gone") == ""
