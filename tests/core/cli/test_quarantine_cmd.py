"""``coven quarantine NAME [--reason TEXT]``, ``coven release NAME`` and ``coven probe NAME``
(DESIGN §6): the circuit breaker by hand, and after the scheduler tripped it."""

from __future__ import annotations

import pytest

from tests.core.cli.conftest import Coven, react
from tests.core.conftest import T0, Engine, minutes

# New Year's midnight only: nothing is scheduled between the steps of a test.
YEARLY = ("--schedule", "0 0 1 1 *", "--tz", "UTC")


def failures(engine: Engine, name: str) -> int:
    row = engine.store.conn.execute(
        "SELECT consecutive_failures FROM routines WHERE name = ?", (name,)
    ).fetchone()
    return int(row[0])


def newest(coven: Coven, name: str) -> tuple[str, str]:
    """The run id and disposition of the routine's newest occurrence."""
    row = coven.json("history", name)["occurrences"][0]
    return row["run_id"], row["disposition"]


@pytest.fixture
def tripped(on_engine_clock: Engine) -> Engine:
    """``broken`` failed at 12:00, 12:10 and 12:20 and was quarantined; now it is 12:45."""
    on_engine_clock.runtime.auto_exit = 1
    on_engine_clock.add("broken", "*/10 * * * *")
    on_engine_clock.run_until(T0 + minutes(45))
    return on_engine_clock


def test_quarantine_probe_release_round_trip(coven: Coven) -> None:
    coven.add("backup", *YEARLY)
    assert coven.json("quarantine", "backup", "--reason", "disk dying") == {
        "routine": "backup",
        "state": "quarantined",
        "reason": "disk dying",
    }
    shown = coven.json("routine", "show", "backup")
    assert (shown["state"], shown["state_reason"]) == ("quarantined", "disk dying")
    coven.refuses("run-now", "backup", message="try one attempt with 'coven probe backup'")
    probe = coven.json("probe", "backup")
    assert (probe["state"], probe["disposition"]) == ("planned", None)
    assert probe["run_id"].startswith("run") and "@manual~" in probe["occurrence_id"]
    assert coven.json("routine", "show", "backup")["state"] == "quarantined"
    released = coven.json("release", "backup")
    assert released == {"routine": "backup", "state": "active", "skipped": 0}
    assert coven.json("routine", "show", "backup")["state"] == "active"
    assert coven.json("run-now", "backup")["state"] == "planned"


def test_release_takes_a_reason_and_audits_it(coven: Coven) -> None:
    """Like every other operator command, a release says why (issue 19, part 2)."""
    coven.add("backup", *YEARLY)
    coven.json("quarantine", "backup", "--reason", "disk dying")
    assert coven.json("release", "backup", "--reason", "new disk")["state"] == "active"
    (newest, *_) = coven.json("audit", "--limit", "1")["entries"]
    assert (newest["action"], newest["target"], newest["why"]) == ("release", "backup", "new disk")


def test_quarantine_without_a_reason_names_who(coven: Coven) -> None:
    coven.add("backup", *YEARLY)
    assert coven.json("quarantine", "backup")["reason"].startswith("quarantined by ")


def test_quarantine_and_release_are_idempotent(coven: Coven) -> None:
    coven.add("backup", *YEARLY)
    coven.json("quarantine", "backup", "--reason", "first")
    assert coven.json("quarantine", "backup", "--reason", "second")["reason"] == "first"
    assert coven.json("release", "backup")["state"] == "active"
    assert coven.json("release", "backup") == {"routine": "backup", "state": "active", "skipped": 0}


def test_readable_confirmations(coven: Coven) -> None:
    coven.add("backup", *YEARLY)
    assert coven("quarantine", "backup", "--reason", "disk dying")[1].splitlines() == [
        "Quarantined 'backup' (disk dying); it plans nothing until released.",
        "Try one attempt with: coven probe backup",
    ]
    status, out, err = coven("probe", "backup")
    assert (status, err) == (
        0,
        "coven probe: no scheduler is running on this store: start "
        "coven-desktop or coven daemon; the run waits until one does\n",
    )
    first, follow = out.splitlines()
    assert first.startswith("Run run") and " of 'backup' is planned (occurrence " in first
    assert follow == "Follow it with: coven history backup"
    assert coven("release", "backup")[1] == (
        "Released 'backup'; 0 moments passed while quarantined, recorded as skipped.\n"
    )


def test_probe_and_release_a_routine_the_scheduler_quarantined(
    coven: Coven, tripped: Engine
) -> None:
    shown = coven.json("routine", "show", "broken")
    assert (shown["state"], shown["state_reason"]) == (
        "quarantined",
        "3 consecutive failed occurrences",
    )
    tripped.runtime.auto_exit = 0
    run_id = coven.json("probe", "broken")["run_id"]
    react(tripped)
    assert newest(coven, "broken") == (run_id, "succeeded")
    assert coven.json("routine", "show", "broken")["state"] == "quarantined"  # probes never release
    assert coven.json("release", "broken")["skipped"] == 2  # 12:30 and 12:40
    assert failures(tripped, "broken") == 0
    assert coven.json("routine", "show", "broken")["state"] == "active"


def test_a_failed_probe_does_not_count_towards_quarantine(coven: Coven, tripped: Engine) -> None:
    run_id = coven.json("probe", "broken")["run_id"]
    react(tripped)
    assert newest(coven, "broken") == (run_id, "failed")
    assert failures(tripped, "broken") == 3


@pytest.mark.parametrize(
    ("setup", "args", "message"),
    [
        ([], ["quarantine", "nobody"], "no routine named 'nobody'"),
        ([], ["release", "nobody"], "no routine named 'nobody'"),
        ([], ["probe", "nobody"], "no routine named 'nobody'"),
        ([], ["quarantine"], "the following arguments are required: NAME"),
        ([], ["probe", "backup"], "routine 'backup' is not quarantined: use run-now"),
        ([["pause", "backup"]], ["release", "backup"], "only a quarantined routine can be"),
        ([], ["probe", "backup", "--key", "k"], "unrecognized arguments: --key"),
    ],
)
def test_bad_input_exits_2_and_changes_nothing(
    coven: Coven, setup: list[list[str]], args: list[str], message: str
) -> None:
    coven.add("backup", *YEARLY)
    for step in setup:
        assert coven(*step)[0] == 0
    coven.refuses(*args, message=message)
