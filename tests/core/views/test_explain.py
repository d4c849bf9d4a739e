"""DST explanations for people (issue #8): one occurrence or one routine, in en_US and de_DE,
from occurrences the scheduler really planned under virtual time."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from coven_core.clock import VirtualClock
from coven_core.errors import ValidationError
from coven_core.notation import reasons
from coven_core.scheduling.routines import UnknownRoutine
from coven_core.tz import tzdb
from coven_core.tz.binding import LocalTimeKind
from coven_core.views.explain import explain_occurrence, explain_routine, offset_label
from tests.core.conftest import T0, Engine, make_engine
from tests.core.views.test_timeline import slept_engine

NNBSP = "\u202f"  # CLDR puts a narrow no-break space before AM/PM


def plain(text: str) -> str:
    return text.replace(NNBSP, " ")


def occurrence(engine: Engine, where: str) -> str:
    return engine.store.conn.execute(f"SELECT id FROM occurrences WHERE {where}").fetchone()[0]


def new_york(tmp_path, name: str, schedule: str, start: datetime, end: datetime) -> Engine:
    """One routine in New York, planned and run from ``start`` to ``end`` under virtual time."""
    engine = make_engine(tmp_path / name, VirtualClock(start))
    engine.add(name, schedule, tz="America/New_York")
    engine.run_until(end)
    return engine


@pytest.fixture
def spring(tmp_path) -> Iterator[Engine]:
    """Nightly at 02:30 in New York across the spring change of 8 March 2026."""
    engine = new_york(tmp_path, "nightly", "30 2 * * *", datetime(2026, 3, 7, 12, tzinfo=UTC),
                      datetime(2026, 3, 10, 12, tzinfo=UTC))  # fmt: skip
    yield engine
    engine.store.close()


@pytest.fixture
def autumn(tmp_path) -> Iterator[Engine]:
    """Nightly at 01:30 in New York across the autumn change of 1 November 2026."""
    engine = new_york(tmp_path, "early", "30 1 * * *", datetime(2026, 10, 31, 12, tzinfo=UTC),
                      datetime(2026, 11, 1, 12, tzinfo=UTC))  # fmt: skip
    yield engine
    engine.store.close()


def test_a_gap_skip_says_the_time_does_not_exist_and_was_not_moved(spring: Engine) -> None:
    found = explain_occurrence(spring.store, occurrence(spring, "local_kind = 'nonexistent'"),
                               "en_US")  # fmt: skip
    assert plain(found.facts.sentence) == (
        "2:30 AM on Sunday, March 8, 2026 does not exist in New York: clocks jump from 2:00 AM "
        "to 3:00 AM. This run was skipped (Coven never moves a run to another time)."
    )
    facts = found.facts
    assert (facts.offset, facts.zone, facts.kind) == (
        "UTC\u22125", "America/New_York", LocalTimeKind.NONEXISTENT
    )  # fmt: skip
    assert facts.zone_name == "Eastern Standard Time"  # the offset it was read with
    assert plain(facts.local) == "2:30 AM on Sunday, March 8, 2026"
    assert plain(facts.utc) == "Mar 8, 2026, 7:30:00 AM"
    assert facts.tzdb_version == tzdb.active().version
    assert found.outcome == "It was skipped (the time does not exist)."
    assert (
        found.routine == "nightly" and found.inspection["occurrence"]["id"] == found.occurrence_id
    )


def test_a_fold_says_coven_ran_at_the_first_pass_only(autumn: Engine) -> None:
    oid = occurrence(autumn, "local_kind = 'repeated'")
    found = explain_occurrence(autumn.store, oid, "en_US")
    assert plain(found.facts.sentence) == (
        "1:30 AM on Sunday, November 1, 2026 happens twice in New York. Coven ran at the first "
        "one (EDT, UTC\u22124) and not again an hour later."
    )
    assert found.outcome == "It succeeded."


def test_german_dates_times_and_zone_names_come_from_babel(spring: Engine, autumn: Engine) -> None:
    gap = explain_occurrence(spring.store, occurrence(spring, "local_kind = 'nonexistent'"),
                             "de_DE")  # fmt: skip
    assert gap.facts.local.endswith("Sonntag, 8. März 2026")
    assert "die Uhren springen von 02:00 auf 03:00" in gap.facts.sentence
    assert gap.facts.utc == "08.03.2026, 07:30:00"
    assert gap.facts.zone_name == "Nordamerikanische Ostküsten-Normalzeit"
    fold = explain_occurrence(autumn.store, occurrence(autumn, "local_kind = 'repeated'"), "de_DE")
    # German CLDR has no "EDT": a bare offset is not repeated as if it were a name
    assert "ersten Mal (UTC\u22124)" in fold.facts.sentence
    assert fold.facts.sentence.startswith("01:30 am Sonntag, 1. November 2026")


def test_an_ordinary_run_says_no_rule_was_involved(spring: Engine) -> None:
    found = explain_occurrence(spring.store, occurrence(spring, "local_time LIKE '2026-03-09%'"),
                               "en_US")  # fmt: skip
    assert plain(found.facts.sentence) == (
        "2:30 AM on Monday, March 9, 2026 is an ordinary time in New York (UTC\u22124): no "
        "daylight-saving rule was involved."
    )


def test_a_coalesced_window_names_its_count_and_cause(engine: Engine) -> None:
    slept_engine(engine)
    found = explain_occurrence(engine.store, occurrence(engine, "kind = 'coalesced'"), "en_US")
    assert plain(found.facts.sentence) == (
        "35 runs from 3/1/26, 12:05 PM to 3/1/26, 2:55 PM did not happen because the computer "
        "was asleep. Coven recorded them as one skipped window instead of one row each."
    )
    assert found.outcome == "It was skipped (missed)."


def test_an_unknown_occurrence_is_refused_by_name(engine: Engine) -> None:
    with pytest.raises(ValidationError, match="no occurrence or run 'nope'"):
        explain_occurrence(engine.store, "nope", "en_US")


def test_a_routine_lists_next_year_s_transitions_and_what_they_do_to_it(tmp_path) -> None:
    clock = VirtualClock(datetime(2026, 1, 10, 12, tzinfo=UTC))
    engine = make_engine(tmp_path / "d", clock)
    engine.add("nightly", "30 2 * * *", tz="America/New_York")
    engine.add("early", "*/30 1 * * *", tz="America/New_York")
    nightly = explain_routine(engine.store, "nightly", clock.now_utc(), "en_US")
    assert [plain(t.sentence) for t in nightly.transitions] == [
        "On Sunday, March 8, 2026 clocks in New York jump forward from 2:00 AM to 3:00 AM. One "
        "run of this routine falls in the gap and will be skipped.",
        "On Sunday, November 1, 2026 clocks in New York go back from 2:00 AM to 1:00 AM. No run "
        "of this routine falls in the change.",
    ]
    early = explain_routine(engine.store, "early", clock.now_utc(), "en_US")
    assert [t.affected for t in early.transitions] == [0, 2]
    assert early.transitions[1].sentence.endswith(
        "2 runs of this routine fall in the repeated hour and run once each, at the first pass."
    )
    assert plain(nightly.verdict) == "It will run next at 2:30 AM on Sunday, January 11, 2026."
    assert nightly.next_run is not None and nightly.next_run.kind is LocalTimeKind.REGULAR
    assert len(nightly.upcoming) == 5 and nightly.zone_place == "New York"
    engine.store.close()


def test_a_future_gap_in_the_upcoming_moments_will_be_skipped(tmp_path) -> None:
    clock = VirtualClock(datetime(2026, 3, 6, 12, tzinfo=UTC))
    engine = make_engine(tmp_path / "d", clock)
    engine.add("nightly", "30 2 * * *", tz="America/New_York")
    found = explain_routine(engine.store, "nightly", clock.now_utc(), "de_DE", count=3)
    assert [m.kind for m in found.upcoming] == [
        LocalTimeKind.REGULAR, LocalTimeKind.NONEXISTENT, LocalTimeKind.REGULAR
    ]  # fmt: skip
    assert "Diese Ausführung wird übersprungen" in found.upcoming[1].sentence
    assert found.verdict == "Sie läuft als Nächstes um 02:30 am Samstag, 7. März 2026."
    engine.store.close()


def test_a_paused_utc_routine_has_no_transitions_and_says_why(engine: Engine) -> None:
    engine.add("daily", "0 3 * * *")
    engine.operator.pause("daily", reason="on holiday")
    found = explain_routine(engine.store, "daily", T0, "en_US")
    assert found.verdict == "It will not run: the routine is paused (on holiday)."


def test_a_routine_paused_for_a_decision_is_explained_in_the_windows_words(
    engine: Engine,
) -> None:
    """The Explain window's sentence, not the CLI's "(coven attention)" and a run id."""
    engine.add("daily", "0 3 * * *")
    waits = reasons.AWAITS_DECISION.format(run="run3d8f0a1b2c3d")
    engine.store.conn.execute("UPDATE routines SET state = 'paused', state_reason = ?", (waits,))
    found = explain_routine(engine.store, "daily", T0, "en_US")
    assert found.verdict == (
        "It will not run: the routine is paused (a run needs your decision in Needs attention)."
    )
    assert found.transitions == () and found.zone_place == "UTC"
    with pytest.raises(UnknownRoutine):
        explain_routine(engine.store, "nope", T0, "en_US")


def test_interval_schedules_count_absolute_time_through_a_fold(tmp_path) -> None:
    clock = VirtualClock(datetime(2026, 11, 1, 4, tzinfo=UTC))  # midnight in New York
    engine = make_engine(tmp_path / "d", clock)
    engine.add("every", "every 30m", tz="America/New_York")
    engine.run_until(datetime(2026, 11, 1, 8, tzinfo=UTC))
    sentences = [
        explain_occurrence(engine.store, oid, "en_US").facts.sentence
        for (oid,) in engine.store.conn.execute(
            "SELECT id FROM occurrences WHERE local_time LIKE '2026-11-01T01:30%' "
            "ORDER BY scheduled_utc")
    ]  # fmt: skip
    assert len(sentences) == 2
    assert "this is the first pass (UTC\u22124)" in sentences[0]
    assert "this is the second pass (UTC\u22125)" in sentences[1]
    engine.store.close()


@pytest.mark.parametrize(
    ("hours", "text"),
    [(-4, "UTC\u22124"), (5.5, "UTC+5:30"), (0, "UTC+0"), (-9.5, "UTC\u22129:30")],
)
def test_offsets_are_written_as_people_write_them(hours: float, text: str) -> None:
    assert offset_label(timedelta(hours=hours)) == text
