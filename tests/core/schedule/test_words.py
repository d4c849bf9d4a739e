"""Vectors and properties for ``coven_core.schedule.words``: a schedule in words."""

from __future__ import annotations

import itertools
import re
from datetime import UTC, datetime, timedelta
from itertools import islice
from pathlib import Path

import pytest
from babel.messages.extract import extract_python
from babel.messages.pofile import read_po
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from coven_core.errors import ScheduleError
from coven_core.notation.i18n import CATALOG_DIRS
from coven_core.schedule.cron import CronSchedule
from coven_core.schedule.interval import IntervalSchedule
from coven_core.schedule.once import OnceSchedule
from coven_core.schedule.rrule import RRuleSchedule
from coven_core.schedule.timetable import Timetable
from coven_core.schedule.words import describe, describe_timetable

#: Babel puts a narrow no-break space between the time and AM/PM in en_US.
NNBSP = "\u202f"
DTSTART = datetime(2026, 3, 5, 9, 7)


def en(text: str) -> str:
    return text.replace(" AM", NNBSP + "AM").replace(" PM", NNBSP + "PM")


def words(spec: str, locale: str) -> str:
    """The sentence for a spec as a routine would store it (RRULE DTSTART = DTSTART)."""
    anchor = DTSTART.replace(tzinfo=UTC)
    return describe_timetable(Timetable.build(spec, "UTC", anchor), locale)


# (spec, en_US, de_DE). The German sentences are the catalog's; dates, times, weekday and
# month names, lists and units are Babel's.
VECTORS = [
    ("30 2 * * *", "Every day at 2:30 AM", "Täglich um 02:30"),
    ("@daily", "Every day at 12:00 AM", "Täglich um 00:00"),
    ("*/15 * * * *", "Every 15 minutes", "Alle 15 Minuten"),
    ("* * * * *", "Every minute", "Jede Minute"),
    ("@hourly", "Every hour", "Stündlich"),
    ("5 * * * *", "Every hour at minute 5", "Stündlich zur Minute 5"),
    ("0 */2 * * *", "Every 2 hours", "Alle 2 Stunden"),
    ("30 */6 * * *", "Every 6 hours at minute 30", "Alle 6 Stunden zur Minute 30"),
    ("0 9 * * 1,5", "Every Monday and Friday at 9:00 AM", "Jeden Montag und Freitag um 09:00"),
    (
        "0 9 * * SUN,SAT",
        "Every Saturday and Sunday at 9:00 AM",
        "Jeden Samstag und Sonntag um 09:00",
    ),
    ("0 9 * * 1-5", "Every Monday to Friday at 9:00 AM", "Jeden Montag bis Freitag um 09:00"),
    ("0 9 * * 5-7", "Every Friday to Sunday at 9:00 AM", "Jeden Freitag bis Sonntag um 09:00"),
    (
        "0 9 * * 0,1,2",  # Sunday to Tuesday wraps the week's end: listed, not a range
        "Every Monday, Tuesday, and Sunday at 9:00 AM",
        "Jeden Montag, Dienstag und Sonntag um 09:00",
    ),
    ("0 9,17 * * *", "Every day at 9:00 AM and 5:00 PM", "Täglich um 09:00 und 17:00"),
    (
        "*/10 9-17 * * 1-5",
        "Every 10 minutes from 9:00 AM to 5:50 PM on Monday to Friday",
        "Alle 10 Minuten von 09:00 bis 17:50 am Montag bis Freitag",
    ),
    ("0 0 1 * *", "On day 1 of each month at 12:00 AM", "Am Tag 1 jedes Monats um 00:00"),
    (
        "0 6 1,15 * *",
        "On day 1 and day 15 of each month at 6:00 AM",
        "Am Tag 1 und Tag 15 jedes Monats um 06:00",
    ),
    (
        "0 0 1,15 * MON",  # both day fields restricted: either matches (classic cron)
        "On day 1 and day 15 of each month and every Monday at 12:00 AM",
        "Am Tag 1 und Tag 15 jedes Monats und jeden Montag um 00:00",
    ),
    (
        "0 0 */10 * FRI",  # a '*'-led day field: both must match
        "On day 1, day 11, day 21, and day 31 of each month, when it is a Friday, at 12:00 AM",
        "Am Tag 1, Tag 11, Tag 21 und Tag 31 jedes Monats, wenn er ein Freitag ist, um 00:00",
    ),
    ("0 0 1 1 *", "Every year on January 1 at 12:00 AM", "Jedes Jahr am 1. Januar um 00:00"),
    (
        "0 12 29 2 *",
        "Every year on February 29 (in leap years) at 12:00 PM",
        "Jedes Jahr am 29. Februar (in Schaltjahren) um 12:00",
    ),
    (
        "0 12 * 1,7 *",
        "Every day at 12:00 PM, only in January and July",
        "Täglich um 12:00, nur im Januar und Juli",
    ),
    (
        "*/7 * * * *",  # 56 → 0 is 4 minutes: not "every 7 minutes"
        "At minute 0, 7, 14, 21, 28, 35, 42, 49, and 56 of every hour",
        "Zur Minute 0, 7, 14, 21, 28, 35, 42, 49 und 56 jeder Stunde",
    ),
    (
        "0 */5 * * *",  # 20:00 → 00:00 is 4 hours: listed, not "every 5 hours"
        "Every day at 12:00 AM, 5:00 AM, 10:00 AM, 3:00 PM, and 8:00 PM",
        "Täglich um 00:00, 05:00, 10:00, 15:00 und 20:00",
    ),
    (
        "0,20,45 1,3,7,9,11 * * *",
        "At minute 0, 20, and 45 past hour 1, 3, 7, 9, and 11",
        "Zur Minute 0, 20 und 45 der Stunde 1, 3, 7, 9 und 11",
    ),
    (
        "*/30 1,3,7 * * *",
        "Every 30 minutes during hours 1, 3, and 7",
        "Alle 30 Minuten während der Stunden 1, 3 und 7",
    ),
    (
        "rrule:FREQ=MONTHLY;BYMONTHDAY=-1;BYHOUR=18;BYMINUTE=0",
        "On the last day of each month at 6:00 PM",
        "Am letzten Tag jedes Monats um 18:00",
    ),
    (
        "rrule:FREQ=MONTHLY;BYMONTHDAY=1,-2;BYHOUR=8;BYMINUTE=0",
        "On day 1 and day 2 counted from the end of each month at 8:00 AM",
        "Am Tag 1 und Tag 2 vom Monatsende gezählt jedes Monats um 08:00",
    ),
    (
        "rrule:FREQ=MONTHLY;BYDAY=-1FR;BYHOUR=18;BYMINUTE=0",
        "On the last Friday of each month at 6:00 PM",
        "Am letzten Freitag jedes Monats um 18:00",
    ),
    (
        "rrule:FREQ=MONTHLY;BYDAY=1MO,3MO;BYHOUR=9;BYMINUTE=30",
        "On the first Monday and the third Monday of each month at 9:30 AM",
        "Am ersten Montag und dritten Montag jedes Monats um 09:30",
    ),
    (
        "rrule:FREQ=MONTHLY;BYMONTHDAY=13;BYDAY=FR;BYHOUR=0;BYMINUTE=0",
        "On day 13 of each month, when it is a Friday, at 12:00 AM",
        "Am Tag 13 jedes Monats, wenn er ein Freitag ist, um 00:00",
    ),
    (
        "rrule:FREQ=WEEKLY;BYDAY=MO,FR;BYHOUR=9;BYMINUTE=0",
        "Every Monday and Friday at 9:00 AM",
        "Jeden Montag und Freitag um 09:00",
    ),
    ("rrule:FREQ=WEEKLY", "Every Thursday at 9:07 AM", "Jeden Donnerstag um 09:07"),  # DTSTART's
    (
        "rrule:FREQ=WEEKLY;INTERVAL=2;BYDAY=MO",
        "Every 2 weeks on Monday, counting from March 5, 2026, at 9:07 AM",
        "Alle 2 Wochen am Montag, gezählt ab 5. März 2026, um 09:07",
    ),
    (
        "rrule:FREQ=WEEKLY;INTERVAL=2;BYDAY=MO;WKST=SU",
        "Every 2 weeks on Monday (weeks starting on Sunday), counting from March 5, 2026, at 9:07 AM",
        "Alle 2 Wochen am Montag (Wochen beginnen am Sonntag), gezählt ab 5. März 2026, um 09:07",
    ),
    (
        "rrule:FREQ=DAILY;INTERVAL=3;BYHOUR=6;BYMINUTE=0",
        "Every 3 days, counting from March 5, 2026, at 6:00 AM",
        "Alle 3 Tage, gezählt ab 5. März 2026, um 06:00",
    ),
    (
        "rrule:FREQ=DAILY;BYDAY=SA,SU;BYHOUR=10;BYMINUTE=0",
        "Every Saturday and Sunday at 10:00 AM",
        "Jeden Samstag und Sonntag um 10:00",
    ),
    (
        "rrule:FREQ=MINUTELY;INTERVAL=15",
        "Every 15 minutes, counting from Mar 5, 2026, 9:07 AM",
        "Alle 15 Minuten, gezählt ab 05.03.2026, 09:07",
    ),
    (
        "rrule:FREQ=MINUTELY;INTERVAL=120",
        "Every 2 hours, counting from Mar 5, 2026, 9:07 AM",
        "Alle 2 Stunden, gezählt ab 05.03.2026, 09:07",
    ),
    (
        "rrule:FREQ=HOURLY;INTERVAL=6",
        "Every day at 3:07 AM, 9:07 AM, 3:07 PM, and 9:07 PM",
        "Täglich um 03:07, 09:07, 15:07 und 21:07",
    ),
    (
        "rrule:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU;BYHOUR=1;BYMINUTE=0",
        "On the last Sunday of March at 1:00 AM",
        "Am letzten Sonntag im März um 01:00",
    ),
    ("rrule:FREQ=YEARLY", "Every year on March 5 at 9:07 AM", "Jedes Jahr am 5. März um 09:07"),
    (
        "rrule:FREQ=DAILY;COUNT=5;BYHOUR=7;BYMINUTE=0",
        "Every day at 7:00 AM, 5 times from Mar 5, 2026, 9:07 AM",
        "Täglich um 07:00, 5-mal ab 05.03.2026, 09:07",
    ),
    (
        "rrule:FREQ=DAILY;UNTIL=20270101T000000Z;BYHOUR=7;BYMINUTE=0",
        "Every day at 7:00 AM, until Jan 1, 2027, 12:00 AM UTC",
        "Täglich um 07:00, bis 01.01.2027, 00:00 UTC",
    ),
    (
        "rrule:FREQ=DAILY;BYMONTH=12;BYHOUR=7;BYMINUTE=0",
        "Every day at 7:00 AM, only in December",
        "Täglich um 07:00, nur im Dezember",
    ),
    # Shapes without a natural sentence: the rule itself, never an approximation.
    (
        "rrule:FREQ=HOURLY;INTERVAL=5",
        "Repeats by the rule FREQ=HOURLY;INTERVAL=5, starting Mar 5, 2026, 9:07 AM",
        "Wiederholt nach der Regel FREQ=HOURLY;INTERVAL=5, ab 05.03.2026, 09:07",
    ),
    (
        "rrule:FREQ=YEARLY;BYDAY=20MO",
        "Repeats by the rule FREQ=YEARLY;BYDAY=20MO, starting Mar 5, 2026, 9:07 AM",
        "Wiederholt nach der Regel FREQ=YEARLY;BYDAY=20MO, ab 05.03.2026, 09:07",
    ),
    (
        "rrule:FREQ=MONTHLY;INTERVAL=2;BYMONTHDAY=1",
        "Repeats by the rule FREQ=MONTHLY;INTERVAL=2;BYMONTHDAY=1, starting Mar 5, 2026, 9:07 AM",
        "Wiederholt nach der Regel FREQ=MONTHLY;INTERVAL=2;BYMONTHDAY=1, ab 05.03.2026, 09:07",
    ),
    ("every 15m", "Every 15 minutes", "Alle 15 Minuten"),
    ("every 90m", "Every 90 minutes", "Alle 90 Minuten"),
    ("every 1h", "Every hour", "Stündlich"),
    ("every 1m", "Every minute", "Jede Minute"),
    ("every 1d", "Every 24 hours", "Alle 24 Stunden"),  # absolute: not a calendar day
    (
        "once 2027-03-05T09:00",
        "Once on March 5, 2027 at 9:00 AM",
        "Einmal am 5. März 2027 um 09:00",
    ),
]


@pytest.mark.parametrize(("spec", "english", "german"), VECTORS, ids=[v[0] for v in VECTORS])
def test_vectors_en_us(spec: str, english: str, german: str) -> None:
    assert words(spec, "en_US") == en(english)


@pytest.mark.parametrize(("spec", "english", "german"), VECTORS, ids=[v[0] for v in VECTORS])
def test_vectors_de_de(spec: str, english: str, german: str) -> None:
    assert words(spec, "de_DE") == german


def test_describe_takes_the_parsed_schedule_objects() -> None:
    assert describe(CronSchedule.parse("30 2 * * *"), "de_DE") == "Täglich um 02:30"
    assert describe(IntervalSchedule.parse("every 2h"), "de_DE") == "Alle 2 Stunden"
    assert describe(OnceSchedule.parse("2027-03-05T09:00"), "en_US") == en(
        "Once on March 5, 2027 at 9:00 AM"
    )
    rule = RRuleSchedule.parse("FREQ=MONTHLY;BYMONTHDAY=-1", DTSTART)
    assert describe(rule, "en_US") == en("On the last day of each month at 9:07 AM")


# --- never raises, for any valid schedule ------------------------------------------------


def _field(low: int, high: int, names: list[str] | None = None) -> st.SearchStrategy[str]:
    number = st.integers(low, high).map(str)
    value = number if not names else st.one_of(number, st.sampled_from(names))
    ranged = st.tuples(st.integers(low, high), st.integers(low, high)).map(
        lambda pair: f"{min(pair)}-{max(pair)}"
    )
    stepped = st.tuples(st.sampled_from(["*", f"{low}-{high}"]), st.integers(1, high)).map(
        lambda pair: f"{pair[0]}/{pair[1]}"
    )
    item = st.one_of(value, ranged, stepped)
    return st.one_of(st.just("*"), st.lists(item, min_size=1, max_size=3).map(",".join))


_CRON = st.tuples(
    _field(0, 59),
    _field(0, 23),
    _field(1, 31),
    _field(1, 12, ["JAN", "JUN", "DEC"]),
    _field(0, 7, ["MON", "FRI", "SUN"]),
).map(" ".join)


@st.composite
def _rrules(draw: st.DrawFn) -> str:
    freq = draw(st.sampled_from(["MINUTELY", "HOURLY", "DAILY", "WEEKLY", "MONTHLY", "YEARLY"]))
    parts = [f"FREQ={freq}", f"INTERVAL={draw(st.integers(1, 30))}"]

    def maybe(name: str, values: st.SearchStrategy[str]) -> None:
        if draw(st.booleans()):
            parts.append(f"{name}={','.join(draw(st.lists(values, min_size=1, max_size=3)))}")

    weekday = st.sampled_from(["MO", "TU", "WE", "TH", "FR", "SA", "SU"])
    with_ordinal = st.tuples(st.sampled_from(["", "1", "-1", "2", "-5", "5"]), weekday)
    maybe("BYMONTH", st.integers(1, 12).map(str))
    maybe("BYMONTHDAY", st.integers(-31, 31).filter(bool).map(str))
    maybe("BYDAY", with_ordinal.map("".join) if freq in ("MONTHLY", "YEARLY") else weekday)
    maybe("BYHOUR", st.integers(0, 23).map(str))
    maybe("BYMINUTE", st.integers(0, 59).map(str))
    bound = draw(st.sampled_from(["", "COUNT=3", "UNTIL=20300101", "UNTIL=20300101T120000Z"]))
    parts.extend([bound] if bound else [])
    parts.append(f"WKST={draw(weekday)}")
    return "rrule:" + ";".join(parts)


_SPECS = st.one_of(
    _CRON,
    _rrules(),
    st.tuples(st.integers(1, 10_000), st.sampled_from("mhd")).map(lambda p: f"every {p[0]}{p[1]}"),
    st.datetimes(datetime(1990, 1, 1), datetime(2090, 1, 1)).map(
        lambda at: f"once {at:%Y-%m-%dT%H:%M}"
    ),
    st.sampled_from(["@hourly", "@daily", "@weekly", "@monthly", "@yearly"]),
)


@settings(max_examples=400, deadline=None)
@given(
    spec=_SPECS,
    anchor=st.datetimes(datetime(1990, 1, 1), datetime(2090, 1, 1)),
    locale=st.sampled_from(["en_US", "de_DE", "fr_FR", "ja_JP"]),
)
def test_never_raises_for_a_valid_schedule(spec: str, anchor: datetime, locale: str) -> None:
    try:
        table = Timetable.build(spec, "Europe/Berlin", anchor.replace(tzinfo=UTC))
    except ScheduleError:
        assume(False)
        raise
    sentence = describe_timetable(table, locale)
    assert sentence and "{" not in sentence  # every placeholder filled


def test_every_sentence_has_a_german_translation() -> None:
    """The catalog keeps up with the code: each message in words.py is in the German .po."""
    import coven_core.schedule.words as module

    source = Path(module.__file__)
    catalogs = Path(CATALOG_DIRS[-1])  # resources/locale: the sources (tests/test_catalogs.py)
    with (catalogs / "de" / "LC_MESSAGES" / "coven.po").open("rb") as po:
        catalog = read_po(po)
    with source.open("rb") as code:
        found = [text for _, _call, text, _ in extract_python(code, ["w", "_"], [], {})]
    # A call with a locale argument comes as a tuple; one with a variable message as None.
    messages = {text[0] if isinstance(text, tuple) else text for text in found} - {None}
    untranslated = sorted(m for m in messages if not (catalog.get(m) and catalog.get(m).string))
    assert messages and untranslated == []


_EVERY = re.compile(r"Every (\d+) (minutes|hours)|Every (minute|hour)")


#: Cron specs near the frequency shapes, so that most are said as one (or just miss it).
_NEAR_FREQUENCIES = st.tuples(
    st.sampled_from(["*", "*/5", "*/7", "*/15", "*/25", "0", "5", "0,30", "0-59/10", "10-59/10"]),
    st.sampled_from(["*", "*/2", "*/5", "*/7", "*/12", "3", "1-3", "0-23/4"]),
    st.sampled_from(["*", "*", "*", "*/2", "1"]),
    st.sampled_from(["*", "*", "*", "1"]),
    st.sampled_from(["*", "*", "*", "MON"]),
).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(spec=_NEAR_FREQUENCIES, start=st.datetimes(datetime(2000, 1, 1), datetime(2090, 1, 1)))
def test_every_n_is_said_only_of_times_exactly_n_apart(spec: str, start: datetime) -> None:
    """A frequency alone ("Every 15 minutes", "Every 2 hours") is a promise about spacing:
    every two consecutive times of the schedule are exactly that far apart."""
    try:
        schedule = CronSchedule.parse(spec)
    except ScheduleError:
        assume(False)
        raise
    match = _EVERY.fullmatch(describe(schedule, "en_US"))
    if match is None:
        return  # not said as a bare frequency: nothing promised about spacing
    count, unit, single = match.groups()
    step = timedelta(**{(unit or single + "s"): int(count or 1)})
    times = list(islice(schedule.wall_times_from(start.replace(second=0, microsecond=0)), 50))
    assert all(later - earlier == step for earlier, later in itertools.pairwise(times))
