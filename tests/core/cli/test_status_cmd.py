"""``coven status``: leader, last pass, next deadline, queue depth and counts by state."""

from __future__ import annotations

import pytest

from tests.core.cli.conftest import Coven, invoke
from tests.core.conftest import T0, Engine, minutes


def test_a_new_store_has_no_leader_and_no_pass(coven: Coven) -> None:
    doc = coven.json("status")
    assert doc | {"store_bytes": 0} == {
        "leader": None, "scheduling_paused": False, "last_pass": None, "next_deadline": None,
        "queue_depth": 0, "active": 0, "counts": {}, "oldest_eligible_age_seconds": None,
        "planning_lag_seconds": None, "start_lag_p50_seconds": None,
        "start_lag_p99_seconds": None, "start_lag_samples": 0, "store_bytes": 0,
    }  # fmt: skip
    assert doc["store_bytes"] > 0
    status, out, _ = coven("status")
    assert status == 0 and "none (no scheduler has run on this store)" in out


def test_the_next_deadline_is_the_earliest_routine_due(coven: Coven) -> None:
    coven.add("backup", "--schedule", "30 2 * * *", "--tz", "America/New_York")
    coven.add("later", "--schedule", "0 0 1 1 *", "--tz", "UTC")
    doc = coven.json("status")
    assert doc["next_deadline"] == min(
        r["next_due"] for r in coven.json("routine", "list")["routines"]
    )
    assert doc["counts"] == {"routines_active": 2}


def test_after_the_scheduler_ran(coven: Coven, engine: Engine) -> None:
    engine.add("every5", "*/5 * * * *")
    engine.run_until(T0 + minutes(12))
    doc = coven.json("status")
    leader = doc["leader"]
    assert leader["generation"] == 1 and ":" in leader["holder"]
    assert leader["alive"] is False  # its lease ran out in virtual time, long ago
    assert doc["last_pass"]["error_class"] is None
    assert doc["counts"]["occurrences_succeeded"] == 3
    out = coven("status")[1]
    assert f"{leader['holder']} · generation 1 · gone" in out
    assert "occurrences_succeeded  3" in out


def test_bad_input_exits_2(coven: Coven) -> None:
    coven.refuses("status", "--verbose", message="unrecognized arguments: --verbose")


@pytest.mark.parametrize("where", ["before", "after"])
def test_data_dir_must_not_be_empty(coven: Coven, where: str) -> None:
    args = ["--data-dir", "", "status"] if where == "before" else ["status", "--data-dir", ""]
    status, out, err = invoke(coven.capsys, *args)
    assert (status, out) == (2, "") and err.count("\n") == 1 and "--data-dir is empty" in err
