"""``coven status``: leader, last pass, next deadline, queue depth and counts by state."""

from __future__ import annotations

import pytest

from coven_core.notation.quantities import duration_text, size_text
from tests.core.cli.conftest import Coven, invoke
from tests.core.conftest import T0, Engine, minutes


def test_a_new_store_has_no_leader_and_no_pass(coven: Coven) -> None:
    coven.new_store()
    doc = coven.json("status")
    assert doc | {"store_bytes": 0} == {
        "leader": None, "scheduling_paused": False, "last_pass": None, "next_deadline": None,
        "queue_depth": 0, "active": 0, "counts": {}, "oldest_eligible_age_seconds": None,
        "planning_lag_seconds": None, "start_lag_p50_seconds": None,
        "start_lag_p99_seconds": None, "start_lag_samples": 0, "store_bytes": 0,
        "broken_routines": [],
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


def test_lags_and_size_read_well(
    coven: Coven, on_engine_clock: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    engine = on_engine_clock
    engine.add("every5", "*/5 * * * *")
    engine.run_until(T0 + minutes(12))
    engine.clock.advance(minutes(8))  # asleep: 12:15 is due and not yet planned
    monkeypatch.setenv("LC_ALL", "de_DE.UTF-8")
    doc = coven.json("status")
    assert (doc["planning_lag_seconds"], doc["start_lag_samples"]) == (300, 3)
    head = coven("status")[1].split("\n\n")[0]
    fields = dict(line.split(":", 1) for line in head.splitlines())
    assert {key: value.strip() for key, value in fields.items()} | {"Größe des Datenspeichers": "…"} == {
        "Leitung": fields["Leitung"].strip(), "Planung": "an",
        "Letzter Durchlauf": fields["Letzter Durchlauf"].strip(),
        "Nächste Frist": "2026-03-01T12:15:00Z",
        "Länge der Warteschlange": "0", "Aktiv": "0", "Älteste fällige": "—",
        "Planungsverzug": "5 Minuten",
        "Startverzug": "p50 0 Sekunden · p99 0 Sekunden (3 Starts in der letzten Stunde)",
        "Größe des Datenspeichers": "…",
    }  # German throughout, as the durations  # fmt: skip
    assert fields["Größe des Datenspeichers"].strip() == size_text(doc["store_bytes"], "de_DE")


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(None, "—"), (0, "0 seconds"), (0.25, "250 milliseconds"), (55, "55 seconds"),
     (300, "5 minutes"), (7200, "2 hours")],
)  # fmt: skip
def test_durations_for_people(seconds: float | None, text: str) -> None:
    assert duration_text(seconds, "en_US") == text


@pytest.mark.parametrize(
    ("size", "text"),
    [(1, "1 byte"), (999, "999 bytes"), (151_552, "151.6 kB"), (12_345_678, "12.3 MB"),
     (2 * 10**9, "2 GB")],
)  # fmt: skip
def test_sizes_for_people(size: int, text: str) -> None:
    assert size_text(size, "en_US") == text


def test_sizes_in_the_users_locale() -> None:
    # CLDR joins number and unit with a no-break space in some units: compare the words.
    assert size_text(151_552, "de_DE").split() == ["151,6", "kB"]
    assert size_text(2 * 10**9, "de_DE").split() == ["2", "GB"]
