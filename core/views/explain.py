"""What the DST policy decided, for people: one occurrence or one routine (issue #8, §3).

The facts (local time, UTC, offset, zone, tz database version) and one plain sentence saying
what happened and why, for example::

    2:30 AM on Sunday, March 8, 2026 does not exist in New York: clocks jump from 2:00 AM to
    3:00 AM. This run was skipped (Coven never moves a run to another time).

Sentences go through :func:`coven_core.notation.i18n._`; dates, times, durations and zone names are
formatted by Babel in the given locale. A routine's explanation also lists the transitions of
its zone in the next year and what each does to the routine's moments.

Formatting never reads an aware datetime for a wall time that does not exist (Babel would show
it as if it did): wall times are formatted as naive values, instants through UTC.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from typing import Any

from babel.dates import (
    format_date,
    format_datetime,
    format_time,
    format_timedelta,
    get_timezone_location,
    get_timezone_name,
)

from coven_core.model import Disposition, OccurrenceKind, Revision
from coven_core.notation.i18n import N_, _
from coven_core.notation.reasons import window_reason_text
from coven_core.queries import Explanation, explain, usable
from coven_core.schedule.exclusions import EXCLUDED_DATE
from coven_core.schedule.timetable import ScheduleKind, Timetable
from coven_core.scheduling import routines
from coven_core.store.codec import instant_from
from coven_core.store.store import Store
from coven_core.tz import tzdb
from coven_core.tz.binding import BoundTime, LocalTimeKind, at_instant, bind
from coven_core.tz.transitions import Transition, transition_for, transitions_between
from coven_core.views.inspection import inspect
from coven_core.views.policies import after_only, decision_sentence

#: How far ahead a routine's explanation lists its zone's transitions.
UPCOMING_SPAN = timedelta(days=365)
_UTC_KEYS = frozenset({"UTC", "Etc/UTC", "Etc/GMT", "GMT"})


# -- the words for times, offsets and zones ------------------------------------------------
def offset_label(offset: timedelta) -> str:
    """``UTC−4``, ``UTC+5:30``, ``UTC+0`` (a true minus sign, as typeset)."""
    minutes = int(offset.total_seconds()) // 60
    sign = "\u2212" if minutes < 0 else "+"
    hours, rest = divmod(abs(minutes), 60)
    return f"UTC{sign}{hours}" + (f":{rest:02d}" if rest else "")


def zone_place(zone_key: str, locale: str) -> str:
    """The zone as a person names it: its exemplar city ("New York"), or UTC."""
    if zone_key in _UTC_KEYS:
        return "UTC"
    return str(get_timezone_location(tzdb.zone(zone_key), locale=locale, return_city=True))


def short_zone_name(utc: datetime, zone: tzinfo, locale: str) -> str | None:
    """ "EDT" where the locale has a real abbreviation; None where it only has an offset."""
    name = str(get_timezone_name(utc.astimezone(zone), "short", locale=locale))
    return None if name[:1] in "+-\u2212" or name.startswith(("GMT", "UTC")) else name


def wall_text(wall: datetime, locale: str) -> tuple[str, str]:
    """(time, date) of a naive wall time: "2:30 AM", "Sunday, March 8, 2026"."""
    return (format_time(wall.time(), "short", locale=locale),
            format_date(wall.date(), "full", locale=locale))  # fmt: skip


def instant_text(utc: datetime, locale: str) -> str:
    return str(format_datetime(utc.astimezone(UTC), "medium", tzinfo=UTC, locale=locale))


# -- one moment ----------------------------------------------------------------------------
@dataclass(frozen=True)
class MomentFacts:
    """One moment of a routine: what a person needs to see to trust its DST decision."""

    local: str  # the wall time with its date, in the locale
    utc: str
    offset: str  # UTC−4
    zone: str  # the IANA key
    zone_name: str  # "Eastern Daylight Time" (the long name in the locale)
    tzdb_version: str
    kind: LocalTimeKind
    sentence: str  # what happened (or will happen) and why


def _facts(
    moment: BoundTime, zone_key: str, version: str, sentence: str, locale: str
) -> MomentFacts:
    zone = tzdb.zone(zone_key)
    time, date = wall_text(moment.local, locale)
    name = "UTC" if zone_key in _UTC_KEYS else str(
        get_timezone_name(_named_instant(moment).astimezone(zone), "long", locale=locale)
    )  # fmt: skip
    return MomentFacts(
        _("{time} on {date}", locale).format(time=time, date=date),
        instant_text(moment.utc, locale), offset_label(moment.offset), zone_key, name, version,
        moment.kind, sentence,
    )  # fmt: skip


#: How a moment's sentence is told: it ran, it will run, or it was settled without running.
RAN, WILL_RUN, NOT_RUN = "ran", "will_run", "not_run"


def _named_instant(moment: BoundTime) -> datetime:
    """An instant that shows the offset the moment was read with: in a gap, the nominal
    instant already lies after the change, so step back across it to name the old offset."""
    if moment.kind is LocalTimeKind.NONEXISTENT and moment.other_offset is not None:
        return moment.utc - (moment.other_offset - moment.offset)
    return moment.utc


def _gap_sentence(moment: BoundTime, zone_key: str, tense: str, locale: str) -> str:
    transition = transition_for(moment, tzdb.zone(zone_key))
    assert transition is not None
    time, date = wall_text(moment.local, locale)
    jump_from, jump_to = wall_text(transition.wall_before, locale)[0], wall_text(
        transition.wall_after, locale)[0]  # fmt: skip
    text = (
        _("{time} on {date} does not exist in {place}: clocks jump from {jump_from} to "
          "{jump_to}. This run was skipped (Coven never moves a run to another time).", locale)
        if tense != WILL_RUN else
        _("{time} on {date} does not exist in {place}: clocks jump from {jump_from} to "
          "{jump_to}. This run will be skipped (Coven never moves a run to another time).",
          locale)
    )  # fmt: skip
    return text.format(time=time, date=date, place=zone_place(zone_key, locale),
                       jump_from=jump_from, jump_to=jump_to)  # fmt: skip


def _fold_sentence(moment: BoundTime, zone_key: str, tense: str, locale: str) -> str:
    assert moment.other_offset is not None
    time, date = wall_text(moment.local, locale)
    zone = tzdb.zone(zone_key)
    label = offset_label(moment.offset)
    short = short_zone_name(moment.utc, zone, locale)
    first = f"{short}, {label}" if short else label
    later = _later(moment.offset - moment.other_offset, locale)
    text = {
        RAN: _("{time} on {date} happens twice in {place}. Coven ran at the first one ({first}) "
               "and not again {later}.", locale),
        WILL_RUN: _("{time} on {date} happens twice in {place}. Coven will run at the first one "
                    "({first}) and not again {later}.", locale),
        NOT_RUN: _("{time} on {date} happens twice in {place}. Coven would have run at the "
                   "first one ({first}) and not again {later}.", locale),
    }[tense]  # fmt: skip
    return text.format(time=time, date=date, place=zone_place(zone_key, locale), first=first,
                       later=later)  # fmt: skip


def _later(delta: timedelta, locale: str) -> str:
    if delta == timedelta(hours=1):
        return _("an hour later", locale)
    duration = format_timedelta(delta, threshold=2, locale=locale)
    return _("{duration} later", locale).format(duration=duration)


def _interval_fold_sentence(moment: BoundTime, zone_key: str, locale: str) -> str:
    time, date = wall_text(moment.local, locale)
    text = (
        _("{time} on {date} happens twice in {place}; this is the second pass ({offset}). "
          "Interval schedules count absolute time, so both passes can have a run.", locale)
        if moment.fold else
        _("{time} on {date} happens twice in {place}; this is the first pass ({offset}). "
          "Interval schedules count absolute time, so both passes can have a run.", locale)
    )  # fmt: skip
    return text.format(time=time, date=date, place=zone_place(zone_key, locale),
                       offset=offset_label(moment.offset))  # fmt: skip


def _regular_sentence(moment: BoundTime, zone_key: str, locale: str) -> str:
    time, date = wall_text(moment.local, locale)
    text = _("{time} on {date} is an ordinary time in {place} ({offset}): no daylight-saving "
             "rule was involved.", locale)  # fmt: skip
    return text.format(time=time, date=date, place=zone_place(zone_key, locale),
                       offset=offset_label(moment.offset))  # fmt: skip


def moment_sentence(
    moment: BoundTime, zone_key: str, absolute: bool, tense: str, locale: str
) -> str:
    """What the policy decides for one moment; ``tense``: RAN, WILL_RUN or NOT_RUN."""
    if moment.kind is LocalTimeKind.NONEXISTENT:
        return _gap_sentence(moment, zone_key, tense, locale)
    if moment.kind is LocalTimeKind.REPEATED and absolute:
        return _interval_fold_sentence(moment, zone_key, locale)
    if moment.kind is LocalTimeKind.REPEATED:
        return _fold_sentence(moment, zone_key, tense, locale)
    return _regular_sentence(moment, zone_key, locale)


# -- one occurrence ------------------------------------------------------------------------
@dataclass(frozen=True)
class OccurrenceExplanation:
    routine: str
    occurrence_id: str
    facts: MomentFacts
    outcome: str  # what became of it, in one sentence
    inspection: dict[str, Any]  # coven_core.views.inspection.inspect: attempts, delivery, decisions


def explain_occurrence(store: Store, occurrence_id: str, locale: str) -> OccurrenceExplanation:
    """Raises ValidationError for an unknown occurrence (the message names it)."""
    found = inspect(store, occurrence_id)
    row = found["occurrence"]
    with store.read() as conn:
        routine = routines.by_id(conn, row["routine_id"])
        revision = next(r for r in routines.revisions(conn, routine.id)
                        if r.number == row["revision"])  # fmt: skip
    moment = _stored_moment(row, revision)
    absolute = routines.timetable(revision).kind is ScheduleKind.INTERVAL
    if row["kind"] == OccurrenceKind.COALESCED.value:
        sentence = window_sentence(row, locale)
    else:
        sentence = moment_sentence(moment, row["zone"], absolute, _tense(row), locale)
    facts = _facts(moment, row["zone"], row["tzdb_version"], sentence, locale)
    return OccurrenceExplanation(
        routine.name,
        row["id"],
        facts,
        _with_decision(
            outcome_sentence(row["disposition"], row["reason"], row["state"], locale),
            decision_sentence(row["reason"], row.get("decision"), locale),
        ),
        found,
    )


def _with_decision(outcome: str, why: str | None) -> str:
    return outcome if why is None else f"{outcome} {why}"


def _tense(row: dict[str, Any]) -> str:
    if row["state"] != "settled":
        return WILL_RUN if row["state"] == "planned" else RAN
    not_run = (Disposition.SKIPPED.value, Disposition.SHADOWED.value)
    return NOT_RUN if row["disposition"] in not_run else RAN


def _stored_moment(row: dict[str, Any], revision: Revision) -> BoundTime:
    """The moment as planned, rebuilt from the row (which keeps no second offset)."""
    zone = tzdb.zone(row["zone"])
    utc = instant_from(row["scheduled_utc"])
    if row["local_time"] is None or routines.timetable(revision).kind is ScheduleKind.INTERVAL:
        return at_instant(utc, zone)
    return bind(datetime.fromisoformat(row["local_time"]), zone)


_CAUSES = {
    "asleep": N_("the computer was asleep"),
    "app_not_running": N_("Coven was not running"),
    "clock_jump": N_("the clock jumped forward"),
    "paused": N_("the routine was paused"),
    "quarantined": N_("the routine was quarantined"),
    "scheduler_late": N_("the scheduler fell behind"),
}


def window_sentence(row: dict[str, Any], locale: str) -> str:
    first, last = instant_from(row["window_first"]), instant_from(row["window_last"])
    zone = tzdb.zone(row["zone"])
    cause = cause_text(row["cause"] or row["reason"], locale)
    text = _("{count} runs from {first} to {last} did not happen because {cause}. Coven "
             "recorded them as one skipped window instead of one row each.", locale)  # fmt: skip
    wall = [format_datetime(i.astimezone(zone), "short", tzinfo=zone, locale=locale)
            for i in (first, last)]  # fmt: skip
    return text.format(count=row["window_count"], first=wall[0], last=wall[1], cause=cause)


_OUTCOMES = {
    Disposition.SUCCEEDED.value: N_("It succeeded."),
    Disposition.FAILED.value: N_("It failed."),
    Disposition.CANCELLED.value: N_("It was cancelled."),
    Disposition.TIMED_OUT.value: N_("It timed out."),
    Disposition.SKIPPED.value: N_("It was skipped ({reason})."),
    Disposition.RECOVERY_REQUIRED.value: N_("Coven cannot know how it ended: a person decides."),
    Disposition.RECONCILED.value: N_("A person decided how it ended."),
    Disposition.SHADOWED.value: N_("It was a trial ({reason}): nothing was started."),
}
_STATES = {
    "planned": N_("It is planned and has not run yet."),
    "claimed": N_("It is starting."),
    "running": N_("It is running."),
}
_REASONS = {
    "nonexistent_local_time": N_("the time does not exist"),
    "missed": N_("missed"),
    "overlap": N_("the previous run was still going"),
    "paused": N_("paused"),
    "quarantined": N_("quarantined"),
    "deleted": N_("the routine was deleted"),
    "excluded_date": N_("the date is excluded"),
    "would_run": N_("it would have run"),
    "budget_exhausted": N_("the day's budget was used up"),
    "cooldown": N_("cooling down after failures"),
    "group_busy": N_("another routine of its group was running"),
    "condition_unmet": N_("its conditions were not met"),
}


#: A routine's state in a word, for "the routine is {state}".
_ROUTINE_STATES = {
    "active": N_("active"),
    "paused": N_("paused"),
    "quarantined": N_("quarantined"),
    "deleted": N_("deleted"),
}


def outcome_sentence(disposition: str | None, reason: str | None, state: str, locale: str) -> str:
    """What became of an occurrence: "It succeeded.", "It was skipped (missed)." …"""
    if disposition is None:
        return _(_STATES.get(state, "It is planned and has not run yet."), locale)
    why = _(_REASONS.get(reason or "", reason or ""), locale)
    return _(_OUTCOMES[disposition], locale).format(reason=why)


def cause_text(cause: str | None, locale: str) -> str:
    """Why a window of moments did not run: "the computer was asleep" …"""
    return _(_CAUSES.get(cause or "", N_("nothing could run them")), locale)


# -- one routine ---------------------------------------------------------------------------
@dataclass(frozen=True)
class TransitionNote:
    utc: datetime
    sentence: str  # the change and what it does to this routine
    affected: int  # the routine's moments inside the change


@dataclass(frozen=True)
class RoutineExplanation:
    routine: str
    zone: str
    zone_place: str
    tzdb_version: str  # the database the revision was planned with
    verdict: str
    next_run: MomentFacts | None
    upcoming: tuple[MomentFacts, ...]  # the next moments, skipped ones included
    transitions: tuple[TransitionNote, ...]  # the zone's changes in the next year


def explain_routine(
    store: Store, name: str, now: datetime, locale: str, count: int = 5
) -> RoutineExplanation:
    """Raises UnknownRoutine for a name that is not a live routine."""
    found = explain(store, name, now, count)
    revision = usable(found.view)
    zone_key, version = revision.spec.timezone, revision.tzdb_version
    table = routines.timetable(revision)
    absolute = table.kind is ScheduleKind.INTERVAL

    def facts(moment: BoundTime) -> MomentFacts:
        sentence = moment_sentence(moment, zone_key, absolute, WILL_RUN, locale)
        if found.upcoming.skip_reason(moment) == EXCLUDED_DATE:
            sentence = _("It will be skipped: its date is one of the routine's exclusion "
                         "dates.", locale)  # fmt: skip
        return _facts(moment, zone_key, version, sentence, locale)

    return RoutineExplanation(
        found.view.routine.name, zone_key, zone_place(zone_key, locale), version,
        verdict(found, locale), None if found.next_run is None else facts(found.next_run),
        tuple(facts(m) for m in found.upcoming.moments),
        tuple(transition_notes(table, now, locale)),
    )  # fmt: skip


def chain_verdict(revision: Revision | None, locale: str | None) -> str | None:
    """When a routine that only its upstream runs (schedule ``after``) runs; None otherwise."""
    if revision is None or after_only(revision.spec, locale) is None:
        return None
    spec = revision.spec
    text = (_("It has no schedule of its own: it runs each time a run of {routine} succeeds.",
              locale) if spec.after_outcome == "succeeded"
            else _("It has no schedule of its own: it runs each time a run of {routine} ends.",
                   locale))  # fmt: skip
    return text.format(routine=spec.after)


def verdict(found: Explanation, locale: str) -> str:
    """Whether and when it runs next, in one sentence (the localized ``coven explain`` verdict)."""
    routine = found.view.routine
    if routine.state.value != "active":
        text = _("It will not run: the routine is {state}.", locale)
        state = _(_ROUTINE_STATES[routine.state.value], locale)
        if routine.state_reason:
            state += f" ({window_reason_text(routine.state_reason, locale)})"  # the window's
        return text.format(state=state)
    if found.paused_all:
        return _("It will not run: all scheduling is paused.", locale)
    if found.next_run is None and found.upcoming.moments:
        return _(
            "It will not run: its upcoming times do not exist in {place} (they fall in "
            "daylight-saving gaps, and Coven never moves a run to another time).",
            locale,
        ).format(place=zone_place(found.view.zone, locale))
    chained = chain_verdict(found.view.revision, locale)
    if found.next_run is None and chained is not None:
        return chained
    if found.next_run is None:
        return _("It will not run again: its schedule has no further occurrences.", locale)
    time, date = wall_text(found.next_run.local, locale)
    return _("It will run next at {time} on {date}.", locale).format(time=time, date=date)


def transition_notes(table: Timetable, now: datetime, locale: str) -> Iterator[TransitionNote]:
    if table.zone_key in _UTC_KEYS:
        return
    for change in transitions_between(table.zone, now, now + UPCOMING_SPAN):
        affected = _affected(table, change)
        yield TransitionNote(change.utc, _transition_sentence(table, change, affected, locale),
                             affected)  # fmt: skip


def _affected(table: Timetable, change: Transition) -> int:
    """The routine's moments whose wall time the change makes nonexistent or repeated."""
    span = abs(change.offset_after - change.offset_before)
    moments = table.moments_between(change.utc - span, change.utc + span, 10_000)
    return sum(1 for m in moments if m.kind is not LocalTimeKind.REGULAR)


def _transition_sentence(table: Timetable, change: Transition, affected: int, locale: str) -> str:
    head = change_sentence(table.zone_key, change, locale)
    return f"{head} {_effect(table, change, affected, locale)}"


def change_sentence(zone_key: str, change: Transition, locale: str) -> str:
    """ "On Sunday, March 8, 2026 clocks in New York jump forward from 2:00 AM to 3:00 AM." """
    date = wall_text(change.wall_before, locale)[1]
    jump_from, jump_to = wall_text(change.wall_before, locale)[0], wall_text(
        change.wall_after, locale)[0]  # fmt: skip
    if change.is_gap:
        text = _("On {date} clocks in {place} jump forward from {jump_from} to {jump_to}.", locale)
    else:
        text = _("On {date} clocks in {place} go back from {jump_from} to {jump_to}.", locale)
    place = zone_place(zone_key, locale)
    return text.format(date=date, place=place, jump_from=jump_from, jump_to=jump_to)


def _effect(table: Timetable, change: Transition, affected: int, locale: str) -> str:
    if affected == 0:
        return _("No run of this routine falls in the change.", locale)
    if table.kind is ScheduleKind.INTERVAL:
        return _("Interval schedules count absolute time: runs go on at their interval.", locale)
    if change.is_gap:
        one = _("One run of this routine falls in the gap and will be skipped.", locale)
        many = _("{count} runs of this routine fall in the gap and will be skipped.", locale)
    else:
        one = _("One run of this routine falls in the repeated hour and runs once, at the first "
                "pass.", locale)  # fmt: skip
        many = _("{count} runs of this routine fall in the repeated hour and run once each, at "
                 "the first pass.", locale)  # fmt: skip
    return one if affected == 1 else many.format(count=affected)
