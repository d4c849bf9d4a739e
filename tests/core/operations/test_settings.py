"""The default timeout (issue #18): every run has a timeout unless a person said ``none``."""

from __future__ import annotations

from datetime import timedelta

import pytest

from coven_core.errors import ValidationError
from coven_core.notation.durations import NO_TIMEOUT
from tests.core.conftest import T0, Engine, minutes


def _attempt_limits(engine: Engine) -> list[tuple[float | None, str]]:
    return list(
        engine.store.conn.execute(
            "SELECT timeout_seconds, timeout_source FROM attempts ORDER BY claimed_at"
        )
    )


def test_a_routine_without_a_timeout_runs_under_the_default_of_a_day(engine: Engine) -> None:
    engine.add("plain", "every 1h")
    engine.run_until(T0 + minutes(60))
    assert engine.runtime.launches[-1].timeout == timedelta(days=1)
    assert _attempt_limits(engine)[-1] == (86400.0, "default")  # what inspect shows


def test_the_default_is_read_at_dispatch(engine: Engine) -> None:
    engine.add("plain", "every 1h")
    engine.operator.set_setting("default-timeout", "6h")
    engine.run_until(T0 + minutes(60))
    assert engine.runtime.launches[-1].timeout == timedelta(hours=6)
    engine.operator.set_setting("default-timeout", "none")
    engine.run_until(T0 + minutes(120))
    assert engine.runtime.launches[-1].timeout is None
    assert _attempt_limits(engine)[-1] == (None, "default")


def test_a_routines_own_timeout_and_an_explicit_none_win(engine: Engine) -> None:
    own = engine.add("own", "every 1h", timeout=timedelta(minutes=15))
    unlimited = engine.add("unlimited", "every 1h", timeout=NO_TIMEOUT)
    engine.run_until(T0 + minutes(60))
    timeouts = {launch.routine_id: launch.timeout for launch in engine.runtime.launches}
    assert timeouts == {own: timedelta(minutes=15), unlimited: None}
    assert set(_attempt_limits(engine)) == {(900.0, "routine"), (None, "routine")}


def test_a_setting_is_checked_and_audited(engine: Engine) -> None:
    with pytest.raises(ValidationError, match="no setting 'timeout'"):
        engine.operator.set_setting("timeout", "6h")
    with pytest.raises(ValidationError, match="is not a duration"):
        engine.operator.set_setting("default-timeout", "soon")
    value = engine.operator.set_setting("default-timeout", "360m")
    assert value.value == "6h"
    actions = [row[0] for row in engine.store.conn.execute("SELECT action FROM audit_log")]
    assert actions[-3:] == ["config.set"] * 3  # the two refusals too
