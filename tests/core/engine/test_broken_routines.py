"""One routine is one fault domain (DESIGN §6, issue #18): a routine whose stored revision
cannot be loaded is broken, says why and how to mend it, and every other routine goes on."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace

import pytest

from coven_core import events, queries
from coven_core.clock import VirtualClock
from coven_core.errors import ZoneError
from coven_core.events import EventKind
from coven_core.model import OverlapPolicy
from coven_core.notation.i18n import use_locale
from coven_core.scheduling import routines
from coven_core.scheduling.revision_cache import RevisionCache
from coven_core.tz import tzdb
from coven_core.views.overview import TrayState, overview
from tests.core.conftest import T0, Engine, make_engine, minutes

Break = Callable[[Engine, str], None]


def _sql(engine: Engine, sql: str, routine_id: str) -> None:
    engine.store.conn.execute(sql, (routine_id,))
    forget_loaded(engine)


def forget_loaded(engine: Engine) -> None:
    """A stored row changed under the process's caches: read it as a new start would."""
    routines.timetable.cache_clear()
    engine.scheduler.revisions = RevisionCache()


def corrupt_zone(engine: Engine, routine_id: str) -> None:
    _sql(engine, "UPDATE revisions SET timezone = 'Mars/Olympus' WHERE routine_id = ?", routine_id)


def refused_schedule(engine: Engine, routine_id: str) -> None:
    _sql(
        engine, "UPDATE revisions SET schedule = 'cron:61 * * * *' WHERE routine_id = ?", routine_id
    )


def missing_revision(engine: Engine, routine_id: str) -> None:
    _sql(engine, "UPDATE routines SET revision = revision + 1 WHERE id = ?", routine_id)


def damaged_row(engine: Engine, routine_id: str) -> None:
    _sql(engine, "UPDATE revisions SET argv = 'not json' WHERE routine_id = ?", routine_id)


@pytest.fixture
def zone_lost(monkeypatch: pytest.MonkeyPatch) -> Iterator[Break]:
    """A tz database upgrade that no longer has Europe/Kyiv (a fake provider of zones)."""
    real = tzdb.zone

    def without_kyiv(key: str):  # type: ignore[no-untyped-def]
        if key == "Europe/Kyiv":
            raise ZoneError(
                f"unknown time zone {key!r}: use UTC or an IANA name like Europe/Berlin"
            )
        return real(key)

    def lose(engine: Engine, routine_id: str) -> None:
        monkeypatch.setattr(tzdb, "zone", without_kyiv)
        forget_loaded(engine)

    yield lose
    routines.timetable.cache_clear()


BREAKS = {
    "corrupt zone": corrupt_zone,
    "refused schedule": refused_schedule,
    "missing revision": missing_revision,
    "damaged row": damaged_row,
}


def outcomes(engine: Engine, routine_id: str) -> list[tuple]:
    return [(row[0][11:16], row[3] or row[2], row[4]) for row in engine.history(routine_id)]


def broken_events(engine: Engine) -> list[events.Event]:
    found = events.since(engine.store.conn, 0, 10_000)
    return [event for event in found if event.kind is EventKind.ROUTINE_BROKEN]


@pytest.mark.parametrize("damage", BREAKS.values(), ids=BREAKS.keys())
def test_a_broken_routine_stops_alone(engine: Engine, damage: Break) -> None:
    good = engine.add("good", "*/5 * * * *")
    bad = engine.add("bad", "*/5 * * * *")
    engine.run_until(T0 + minutes(2))
    damage(engine, bad)
    engine.run_until(T0 + minutes(32))
    assert [row[1] for row in outcomes(engine, good)] == ["succeeded"] * 7
    assert outcomes(engine, bad) == [("12:00", "succeeded", None)]
    [event] = broken_events(engine)  # once, not at every pass
    assert event.routine_id == bad and "coven routine" in event.data["reason"]


def test_the_event_log_keeps_why_in_english_in_a_german_process(engine: Engine) -> None:
    """The engine's record stays English (DESIGN §12), though the parser that refuses the
    stored schedule says the same refusal in German to a person who types it."""
    use_locale("de_DE")
    bad = engine.add("bad", "*/5 * * * *")
    refused_schedule(engine, bad)
    engine.run_until(T0 + minutes(7))
    [event] = broken_events(engine)
    assert "cron field 1 (minute): 61 is out of range 0-59" in event.data["reason"]


@pytest.mark.parametrize("damage", BREAKS.values(), ids=BREAKS.keys())
def test_the_routine_list_shows_the_broken_one_and_the_rest(engine: Engine, damage: Break) -> None:
    engine.add("good", "*/5 * * * *")
    bad = engine.add("bad", "*/5 * * * *")
    engine.run_until(T0 + minutes(7))  # a last result for each
    damage(engine, bad)
    views = {view.routine.name: view for view in queries.list_routines(engine.store)}
    assert views["good"].broken is None and views["good"].to_json()["broken"] is None
    assert "revision" in (views["bad"].broken or "")
    assert "delete" in views["bad"].to_json()["broken"]
    # The list reads every routine at once; it says what asking for each one says.
    assert views["good"].last_disposition == views["bad"].last_disposition == "succeeded"
    assert views == {name: queries.show(engine.store, name) for name in ("good", "bad")}


def test_a_zone_the_tz_database_lost_breaks_only_its_routine(
    engine: Engine, zone_lost: Break
) -> None:
    good = engine.add("good", "*/5 * * * *", tz="Europe/Berlin")
    bad = engine.add("kyiv", "*/5 * * * *", tz="Europe/Kyiv")
    zone_lost(engine, bad)
    engine.run_until(T0 + minutes(12))
    assert len(outcomes(engine, good)) == 3
    assert outcomes(engine, bad) == []
    reason = queries.show(engine.store, "kyiv").broken or ""
    assert "Europe/Kyiv" in reason and "coven routine edit kyiv --tz ZONE" in reason


def test_an_edit_mends_it_and_the_broken_time_is_one_skipped_window(engine: Engine) -> None:
    bad = engine.add("bad", "*/5 * * * *")
    engine.run_until(T0 + minutes(2))
    corrupt_zone(engine, bad)
    engine.run_until(T0 + minutes(32))
    engine.operator.edit_routine("bad", lambda spec: replace(spec, timezone="UTC"))
    engine.run_until(T0 + minutes(42))
    assert outcomes(engine, bad) == [
        ("12:00", "succeeded", None),
        ("12:00", "skipped", "routine_broken"),  # 12:00:00.000001 → the edit at 12:32
        ("12:35", "succeeded", None),
        ("12:40", "succeeded", None),
    ]
    window = engine.store.conn.execute(
        "SELECT window_first, window_last, window_count, cause FROM occurrences "
        "WHERE reason = 'routine_broken'"
    ).fetchone()
    assert (
        window[0].startswith("2026-03-01T12:00:00") and window[1] == "2026-03-01T12:31:59.999999Z"
    )  # the edit at 12:32 begins the next
    assert window[2:] == (None, "routine_broken")
    assert queries.show(engine.store, "bad").broken is None


def test_the_edit_records_the_broken_window_at_once(engine: Engine) -> None:
    bad = engine.add("bad", "30 7 * * *")
    corrupt_zone(engine, bad)
    engine.run_until(T0 + minutes(1))  # the start's review stops it
    engine.operator.edit_routine("bad", lambda spec: replace(spec, timezone="Europe/Kyiv"))
    assert outcomes(engine, bad) == [("12:00", "skipped", "routine_broken")]


def test_deleting_it_closes_the_broken_window(engine: Engine) -> None:
    bad = engine.add("bad", "*/5 * * * *")
    engine.run_until(T0 + minutes(2))
    refused_schedule(engine, bad)
    engine.run_until(T0 + minutes(20))
    engine.operator.delete_routine("bad")
    assert outcomes(engine, bad)[-1] == ("12:00", "skipped", "routine_broken")


def test_a_start_with_a_database_that_binds_it_again_plans_it_again(
    tmp_path, clock: VirtualClock, zone_lost: Break, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = make_engine(tmp_path / "d", clock)
    bad = first.add("kyiv", "*/5 * * * *", tz="Europe/Kyiv")
    first.run_until(T0 + minutes(2))
    zone_lost(first, bad)
    first.run_until(T0 + minutes(20))
    first.scheduler.shutdown()
    first.store.close()
    monkeypatch.undo()  # the zone is back (a fixed tzdata package), then the app starts
    routines.timetable.cache_clear()
    second = make_engine(tmp_path / "d", clock)
    second.run_until(T0 + minutes(26))
    assert [row[1:] for row in outcomes(second, bad)] == [
        ("succeeded", None),
        ("skipped", "missed"),  # 12:05–12:15 passed while it was broken, 12:20 ran late
        ("succeeded", None),
        ("succeeded", None),
    ]


def test_a_waiting_occurrence_of_a_routine_damaged_since_is_skipped(engine: Engine) -> None:
    engine.runtime.auto_exit = None
    good = engine.add("good", "*/5 * * * *", overlap=OverlapPolicy.QUEUE_ONE)
    bad = engine.add("bad", "*/5 * * * *")
    engine.run_until(T0 + minutes(1))
    engine.operator.run_now("bad", key="k")  # waits: bad's 12:00 run is still active
    damaged_row(engine, bad)
    engine.run_until(T0 + minutes(2))
    for launch in list(engine.runtime.running.values()):
        engine.runtime.finish(launch)
    engine.run_until(T0 + minutes(3))
    assert ("skipped", "routine_broken") in [row[1:] for row in outcomes(engine, bad)]
    assert outcomes(engine, good)[0][1] == "succeeded"


def test_a_start_stops_a_routine_broken_meanwhile_before_its_moment_comes(
    tmp_path, clock: VirtualClock
) -> None:
    first = make_engine(tmp_path / "d", clock)
    first.add("good", "@daily")
    bad = first.add("monthly", "0 3 1 * *")
    first.run_until(T0 + minutes(1))
    first.scheduler.shutdown()
    first.store.close()
    second = make_engine(tmp_path / "d", clock)
    corrupt_zone(second, bad)
    second.run_until(T0 + minutes(2))  # the 1st of next month is weeks away
    [event] = broken_events(second)
    assert event.routine_id == bad
    shown = overview(second.store, clock.now_utc())
    assert shown.state is TrayState.ERROR and shown.broken == ["monthly"]
    assert "monthly" in (shown.error or "")


def test_the_tray_is_not_in_error_for_a_routine_that_merely_ended(engine: Engine) -> None:
    engine.add("once", "once 2026-03-01T12:01")
    engine.run_until(T0 + minutes(5))
    shown = overview(engine.store, engine.clock.now_utc())
    assert shown.broken == [] and shown.state is TrayState.IDLE


def test_resume_refuses_a_broken_routine_naming_the_fix(engine: Engine) -> None:
    bad = engine.add("bad", "*/5 * * * *")
    engine.operator.pause("bad")
    corrupt_zone(engine, bad)
    with pytest.raises(routines.BrokenRoutine, match="coven routine edit bad --tz ZONE"):
        engine.operator.resume("bad")


def test_resume_after_an_edit_records_the_broken_span_and_the_paused_time(
    engine: Engine,
) -> None:
    bad = engine.add("bad", "*/5 * * * *")
    engine.run_until(T0 + minutes(2))
    engine.operator.pause("bad")
    corrupt_zone(engine, bad)
    engine.run_until(T0 + minutes(20))
    engine.operator.edit_routine("bad", lambda spec: replace(spec, timezone="UTC"))
    engine.run_until(T0 + minutes(30))
    engine.operator.resume("bad")
    engine.run_until(T0 + minutes(36))
    assert [row[1:] for row in outcomes(engine, bad)] == [
        ("succeeded", None),
        ("skipped", "routine_broken"),  # 12:00 → the edit at 12:20, under the broken zone
        ("skipped", "paused"),  # 12:20, 12:25 and 12:30 under the mended one
        ("succeeded", None),
    ]


def test_resume_all_goes_on_past_a_routine_that_cannot_be_read(engine: Engine) -> None:
    good = engine.add("good", "*/5 * * * *")
    bad = engine.add("bad", "*/5 * * * *")
    engine.operator.pause_all()
    missing_revision(engine, bad)
    engine.run_until(T0 + minutes(12))
    engine.operator.resume_all()
    engine.run_until(T0 + minutes(16))
    assert outcomes(engine, good)[-1][1] == "succeeded"


def test_resume_all_leaves_a_broken_routine_to_the_edit_that_mends_it(engine: Engine) -> None:
    """Found by the simulation (seed 606841715): each resume of everything recorded the broken
    routine's time so far as a window, from where the last one ended. Two began within one
    second, shared a name, and the second was dropped: its moments passed undecided."""
    engine.operator.pause_all("away")
    bad = engine.add("bad", "*/5 * * * *")
    corrupt_zone(engine, bad)
    engine.run_until(T0 + minutes(1))
    engine.operator.resume_all()
    engine.operator.pause_all("away again")
    engine.operator.resume_all()
    engine.run_until(T0 + minutes(31))
    engine.operator.edit_routine("bad", lambda spec: replace(spec, timezone="UTC"))
    windows = engine.store.conn.execute(
        "SELECT window_first, window_last FROM occurrences WHERE reason = 'routine_broken'"
    ).fetchall()
    assert len(windows) == 1  # the broken span, whole: 12:00 to the edit at 12:31
    assert windows[0][0].startswith("2026-03-01T12:00") and windows[0][1].startswith(
        "2026-03-01T12:30:59.999999"  # up to the edit at 12:31
    )


def test_a_window_never_reaches_over_a_broken_span(engine: Engine, zone_lost: Break) -> None:
    """Found by make soak (seed 812094220): paused, edited into a zone and out again, then a
    tz upgrade lost that zone. At the resume the paused window ran from before the broken
    span to after it, so the moments inside were decided twice (paused and broken)."""
    rid = engine.add("r", "*/5 * * * *")
    engine.run_until(T0 + minutes(2))
    engine.operator.pause("r")
    engine.run_until(T0 + minutes(11))
    engine.operator.edit_routine("r", lambda spec: replace(spec, timezone="Europe/Kyiv"))
    engine.run_until(T0 + minutes(21))
    engine.operator.edit_routine("r", lambda spec: replace(spec, timezone="UTC"))
    zone_lost(engine, rid)
    engine.run_until(T0 + minutes(31))
    engine.operator.resume("r")
    windows = engine.store.conn.execute(
        "SELECT substr(window_first, 12, 5), substr(window_last, 12, 5), reason FROM occurrences "
        "WHERE kind = 'coalesced' ORDER BY window_first"
    ).fetchall()
    assert windows == [
        ("12:05", "12:10", "paused"),  # revision 1 (UTC)
        (
            "12:11",
            "12:20",
            "routine_broken",
        ),  # to just before the edit at 12:21  # revision 2 (Kyiv, lost): bounds, no count
        ("12:25", "12:30", "paused"),  # revision 3 (UTC)
    ]


def test_an_edit_on_the_minute_leaves_its_moment_to_the_new_revision(engine: Engine) -> None:
    """Found by make soak (seed 835284078): a broken span ending where the edit's first
    moment falls (12:30:00 sharp) made a window that held that moment too: decided twice."""
    bad = engine.add("bad", "*/5 * * * *")
    engine.run_until(T0 + minutes(2))
    corrupt_zone(engine, bad)
    engine.run_until(T0 + minutes(30))
    engine.operator.edit_routine("bad", lambda spec: replace(spec, timezone="UTC"))
    engine.run_until(T0 + minutes(31))
    assert outcomes(engine, bad)[-2:] == [
        ("12:00", "skipped", "routine_broken"),  # 12:00:00.000001 to 12:29:59.999999
        ("12:30", "succeeded", None),  # the new revision's own, once
    ]
    (last,) = engine.store.conn.execute(
        "SELECT window_last FROM occurrences WHERE reason = 'routine_broken'"
    ).fetchone()
    assert last < "2026-03-01T12:30"  # the window does not hold 12:30 as well
