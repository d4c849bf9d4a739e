"""The scheduling loop under virtual time (issue #3)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from tests.core.conftest import T0, Engine, minutes


def test_startup_pass_plans_nothing_before_creation(engine: Engine) -> None:
    rid = engine.add("every5", "*/5 * * * *")
    engine.run_until(T0 + minutes(12))
    rows = engine.history(rid)
    assert [(r[0][11:16], r[3]) for r in rows] == [("12:00", "succeeded"), ("12:05", "succeeded"), ("12:10", "succeeded")]
