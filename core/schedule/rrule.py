"""RRULE schedules: the RFC 5545 subset of DESIGN §4, expanded by ``dateutil.rrule``.

Coven only validates and adapts here. The supported parts are FREQ (MINUTELY to YEARLY),
INTERVAL, COUNT, UNTIL, BYMONTH, BYMONTHDAY, BYDAY (ordinals only under MONTHLY and YEARLY),
BYHOUR, BYMINUTE, BYSETPOS and WKST. Every other part is refused by name; nothing is approximated.

The schedule yields naive local wall times. Gaps and folds are the time-zone binding's job.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from itertools import takewhile
from math import gcd
from typing import TYPE_CHECKING, Final, Literal, NamedTuple

from coven_core.errors import ScheduleError
from coven_core.notation.i18n import N_, _
from coven_core.notation.limits import check_year
from coven_core.schedule.cron import CronSchedule

if TYPE_CHECKING:
    from dateutil.rrule import rrule

__all__ = ["RRuleSchedule", "RuleParts"]

_Frequency = Literal[0, 1, 2, 3, 4, 5]

# FREQ, coarsest first, as RFC 5545 orders it and as ``dateutil.rrule`` numbers it; the rule
# is handed to dateutil by name (``_Expansion.rrule``). dateutil itself is imported when a
# rule is first expanded by it: a store of cron schedules (and a monthly rule that is a set of
# cron fields, ``_as_cron``) never loads it, and the tray starts smaller and sooner for that
# (bench_idle's "RSS floor" and "launch floor" import the engine).
YEARLY: Final = 0
MONTHLY: Final = 1
WEEKLY: Final = 2
DAILY: Final = 3
HOURLY: Final = 4
MINUTELY: Final = 5
_FREQUENCIES: Final[dict[str, _Frequency]] = {
    "MINUTELY": MINUTELY,
    "HOURLY": HOURLY,
    "DAILY": DAILY,
    "WEEKLY": WEEKLY,
    "MONTHLY": MONTHLY,
    "YEARLY": YEARLY,
}
_FREQUENCY_NAMES: Final = {number: name for name, number in _FREQUENCIES.items()}
_WEEKDAYS: Final = ("MO", "TU", "WE", "TH", "FR", "SA", "SU")
_WEEKDAY_HINT: Final = N_("MO, TU, WE, TH, FR, SA or SU, with an ordinal like 1MO or -1FR")

# The supported parts, in the order ``str()`` writes them.
_SUPPORTED: Final = (
    "FREQ",
    "INTERVAL",
    "COUNT",
    "UNTIL",
    "BYMONTH",
    "BYMONTHDAY",
    "BYDAY",
    "BYHOUR",
    "BYMINUTE",
    "BYSETPOS",
    "WKST",
)
# Parts RFC 5545 (and RFC 7529) know, which Coven refuses rather than approximates.
_UNSUPPORTED: Final = frozenset(
    {"BYWEEKNO", "BYYEARDAY", "BYSECOND", "RDATE", "EXDATE", "EXRULE", "DTSTART"}
    | {"RSCALE", "SKIP"}
)

_SUPPORTED_NAMES: Final = frozenset(_SUPPORTED)
_PART_NAME: Final = re.compile(r"[A-Z][A-Z0-9-]*")
_WHOLE_NUMBER: Final = re.compile(r"[+-]?[0-9]+")
_MAX_DIGITS: Final = 18
_WEEKDAY_TOKEN: Final = re.compile(r"([+-]?[0-9]{1,3})?([A-Z]+)")
_UNTIL_VALUE: Final = re.compile(
    r"([0-9]{4})([0-9]{2})([0-9]{2})(?:T([0-9]{2})([0-9]{2})([0-9]{2})(Z?))?"
)
_MINUTES_PER_WEEK: Final = 7 * 24 * 60
_UNIT_MINUTES: Final = {"DAILY": 24 * 60, "HOURLY": 60, "MINUTELY": 1}
# The longest each month can be (February in a leap year).
_LONGEST_MONTH: Final = (31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31)


@dataclass(frozen=True)
class _Until:
    """UNTIL as given: an aware UTC instant or a naive local wall time, both inclusive."""

    moment: datetime
    text: str


class _Rule(NamedTuple):
    """The validated parts. Empty tuples mean "not given"; defaults are RFC 5545's.

    Named tuples rather than frozen dataclasses, here and for ``_Expansion``: they are built
    on every cold start of a rule, and cost a fraction to construct (bench row "next
    occurrence cold, monthly RRULE").
    """

    freq: str
    interval: int = 1
    count: int | None = None  # type: ignore[assignment]  # RFC 5545 COUNT hides tuple.count
    until: _Until | None = None
    bymonth: tuple[int, ...] = ()
    bymonthday: tuple[int, ...] = ()
    byday: tuple[tuple[int, int], ...] = ()  # (weekday 0=MO, ordinal or 0 for "every")
    byhour: tuple[int, ...] = ()
    byminute: tuple[int, ...] = ()
    bysetpos: tuple[int, ...] = ()  # positions within each FREQ period; -1 is the last
    wkst: int = 0

    def __str__(self) -> str:
        values = {
            "FREQ": self.freq,
            "INTERVAL": str(self.interval) if self.interval != 1 else None,
            "COUNT": None if self.count is None else str(self.count),
            "UNTIL": None if self.until is None else self.until.text,
            "BYMONTH": _joined(self.bymonth),
            "BYMONTHDAY": _joined(self.bymonthday),
            "BYDAY": ",".join(_weekday_text(day, n) for day, n in self.byday) or None,
            "BYHOUR": _joined(self.byhour),
            "BYMINUTE": _joined(self.byminute),
            "BYSETPOS": _joined(self.bysetpos),
            "WKST": _WEEKDAYS[self.wkst] if self.wkst else None,
        }
        return ";".join(f"{name}={value}" for name, value in values.items() if value is not None)


class _Weekday(NamedTuple):
    """A BYDAY entry as dateutil's ``weekday``: 0 is Monday; ``n`` its ordinal, or None."""

    weekday: int
    n: int | None = None


class _Expansion(NamedTuple):
    """The rule as dateutil arguments, with every default dateutil would take from DTSTART
    made explicit, so that the same set can be expanded from a later period start."""

    freq: _Frequency
    interval: int
    count: int | None  # type: ignore[assignment]  # hides tuple.count, never called here
    wkst: int
    bymonth: tuple[int, ...] | None
    bymonthday: tuple[int, ...] | None
    byweekday: tuple[_Weekday, ...] | None
    byhour: tuple[int, ...] | None
    byminute: tuple[int, ...] | None
    bysetpos: tuple[int, ...] | None

    def rrule(self, dtstart: datetime) -> rrule:
        # UNTIL is never passed: dateutil refuses a UTC UNTIL with a naive DTSTART, and a
        # naive UNTIL is applied by RRuleSchedule itself. WKST is always explicit because
        # dateutil's default follows the process-wide calendar.firstweekday().
        from dateutil import rrule as dateutil  # here, not at import: see _FREQUENCIES

        days = self.byweekday
        return dateutil.rrule(
            getattr(dateutil, _FREQUENCY_NAMES[self.freq]),
            dtstart=dtstart,
            interval=self.interval,
            wkst=self.wkst,
            count=self.count,
            bymonth=self.bymonth,
            bymonthday=self.bymonthday,
            byweekday=None if days is None else [dateutil.weekday(*day) for day in days],
            byhour=self.byhour,
            byminute=self.byminute,
            bysetpos=self.bysetpos,
            bysecond=0,
        )


class RRuleSchedule:
    """An RRULE with its DTSTART: a wall-clock schedule (``CalendarSchedule``). Immutable.

    Build it with :meth:`parse`. Coven follows dateutil where RFC 5545 leaves the set
    undefined: a DTSTART that does not match the rule is *not* yielded, and COUNT counts the
    matching times from DTSTART on.

    UNTIL may be ``YYYYMMDDTHHMMSSZ`` (a UTC instant), ``YYYYMMDDTHHMMSS`` (a local wall
    time) or ``YYYYMMDD`` (the end of that local day); all are inclusive. (RFC 5545 asks for
    the UTC form when DTSTART has a zone; the local forms are accepted for people.)

    Rules that provably never produce a time are refused by :meth:`parse`, but not every
    empty or very sparse rule can be proven so cheaply (say, BYMONTHDAY=1 with BYDAY=2MO).
    For those dateutil searches up to the year 9999 before the iterator ends: a fraction of
    a second for MONTHLY and YEARLY, seconds for DAILY and finer.
    """

    __slots__ = ("_base", "_cron", "_dtstart", "_expansion", "_rule", "_uncounted")

    _rule: _Rule
    _dtstart: datetime
    _expansion: _Expansion
    _cron: CronSchedule | None  # the same set as cron fields, when the rule is one
    _base: rrule | None  # built on first use: most callers restart at a later period
    _uncounted: rrule | None  # built on first use, for a rule with COUNT

    def __init__(self, rule: _Rule, dtstart: datetime, expansion: _Expansion | None = None) -> None:
        """Use :meth:`parse`; this takes an already validated rule and a whole-minute start
        (and, from ``parse``, the expansion it already made)."""
        object.__setattr__(self, "_rule", rule)
        object.__setattr__(self, "_dtstart", dtstart)
        object.__setattr__(self, "_expansion", expansion or _expand(rule, dtstart))
        object.__setattr__(self, "_cron", _as_cron(self._expansion))
        object.__setattr__(self, "_base", None)
        object.__setattr__(self, "_uncounted", None)

    @classmethod
    def parse(cls, text: str, dtstart: datetime) -> RRuleSchedule:
        """Validate an RRULE value (``FREQ=MONTHLY;BYMONTHDAY=-1``, optionally ``RRULE:``-led).

        ``dtstart`` is the naive local wall time of DTSTART in the routine's zone; it is
        truncated to the minute, Coven's resolution. Raises ``ScheduleError`` naming the
        part for anything unsupported or invalid, including a rule that can never produce
        a time because of its months and days or its clock parts.
        """
        _require_naive("dtstart", dtstart)
        start = dtstart
        if dtstart.second or dtstart.microsecond or dtstart.fold:
            start = dtstart.replace(second=0, microsecond=0, fold=0)
        rule = _parse_rule(text)
        expansion = _expand(rule, start)
        _check_month_days(rule, expansion)
        _check_week_reachable(rule, start)
        return cls(rule, start, expansion)

    @property
    def dtstart(self) -> datetime:
        """DTSTART as a naive local wall time, truncated to the minute."""
        return self._dtstart

    @property
    def parts(self) -> RuleParts:
        """The validated parts as given (defaults not filled in from DTSTART)."""
        return self._rule

    @property
    def until(self) -> datetime | None:
        """Inclusive end: an aware UTC instant (``...Z``), a naive wall time, or None.

        ``wall_times_from`` stops after a naive UNTIL itself; an aware one is the planner's
        to apply, because comparing it needs the time-zone binding.
        """
        return None if self._rule.until is None else self._rule.until.moment

    @property
    def count(self) -> int | None:
        """COUNT: how many of the rule's times *exist*. A local time that does not exist is
        no part of the set and is not counted (RFC 5545 §3.3.10); only the binding to a zone
        knows which those are, so :class:`~coven_core.schedule.timetable.Timetable` counts,
        over :meth:`uncounted_wall_times`."""
        return self._rule.count

    def uncounted_wall_times(self) -> Iterator[datetime]:
        """Every wall time from DTSTART on, as if the rule had no COUNT (an endless iterator
        unless the rule ends otherwise): for a counter that knows the zone."""
        if self._uncounted is None:
            expansion = self._expansion._replace(count=None)
            object.__setattr__(self, "_uncounted", expansion.rrule(self._dtstart))
        assert self._uncounted is not None
        return iter(self._uncounted)

    def wall_times_from(self, start: datetime) -> Iterator[datetime]:
        """Naive wall times ``>= start``, ascending, honouring COUNT as counted from DTSTART
        (every wall time counts here: this schedule knows no zone — see :attr:`count`)."""
        _require_naive("start", start)
        until = self.until
        if until is not None and until.tzinfo is None and start > until:
            return iter(())
        times = self._times_from(start)
        if until is not None and until.tzinfo is None:
            return takewhile(lambda moment: moment <= until, times)
        return times

    def _times_from(self, start: datetime) -> Iterator[datetime]:
        if self._cron is not None:  # a cold start at a third of dateutil's cost (bench row)
            return self._cron.wall_times_from(max(start, self._dtstart))
        return self._rrule_for(start).xafter(start, inc=True)

    def _rrule_for(self, start: datetime) -> rrule:
        """A dateutil rule giving the same times from ``start`` on, cheap to advance there.

        dateutil always iterates from its DTSTART, so a rule started years ago would walk
        every period since. Without COUNT the set does not depend on where iteration
        starts, as long as it restarts at a period boundary a whole number of INTERVALs
        after DTSTART's period, with DTSTART's defaults made explicit (``_Expansion``).
        """
        origin = _restart_point(self._expansion, self._dtstart, start)
        if origin != self._dtstart:
            return self._expansion.rrule(origin)
        if self._base is None:  # dateutil's rule is the costliest part of a cold start
            object.__setattr__(self, "_base", self._expansion.rrule(origin))
        assert self._base is not None
        return self._base

    def __str__(self) -> str:
        return str(self._rule)

    def __repr__(self) -> str:
        return f"RRuleSchedule.parse({str(self)!r}, {self._dtstart!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, RRuleSchedule):
            return NotImplemented
        return (self._rule, self._dtstart) == (other._rule, other._dtstart)

    def __hash__(self) -> int:
        return hash((self._rule, self._dtstart))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"RRuleSchedule is immutable (cannot set {name})")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"RRuleSchedule is immutable (cannot delete {name})")

    def __reduce__(self) -> tuple[object, tuple[str, datetime]]:
        # Copy and pickle through parse: the default would restore slots by setattr.
        return (type(self).parse, (str(self), self._dtstart))


#: The validated parts of a rule, for readers such as ``coven_core.schedule.words``.
RuleParts = _Rule


# Parsing ------------------------------------------------------------------------------


def _parse_rule(text: str) -> _Rule:
    parts = _split_parts(text)
    if "FREQ" not in parts:
        raise ScheduleError(_("RRULE: FREQ is required"))
    if "COUNT" in parts and "UNTIL" in parts:
        raise ScheduleError(_("RRULE: COUNT and UNTIL cannot both be given"))
    freq = _parse_freq(parts["FREQ"])
    given = parts.get  # each part is read where it is given, and no closure is built
    return _Rule(
        freq=freq,
        interval=_positive("INTERVAL", value) if (value := given("INTERVAL")) else 1,
        count=_positive("COUNT", value) if (value := given("COUNT")) else None,
        until=_parse_until(value) if (value := given("UNTIL")) else None,
        bymonth=_number_list("BYMONTH", value, 1, 12) if (value := given("BYMONTH")) else (),
        bymonthday=(
            _signed_positions("BYMONTHDAY", value, 31) if (value := given("BYMONTHDAY")) else ()
        ),
        byday=_parse_byday(value, freq, "BYMONTH" in parts) if (value := given("BYDAY")) else (),
        byhour=_number_list("BYHOUR", value, 0, 23) if (value := given("BYHOUR")) else (),
        byminute=_number_list("BYMINUTE", value, 0, 59) if (value := given("BYMINUTE")) else (),
        bysetpos=_set_positions(parts) if "BYSETPOS" in parts else (),
        wkst=_parse_wkst(value) if (value := given("WKST")) else 0,
    )


def _split_parts(text: str) -> dict[str, str]:
    body = text.strip()
    if body[:6].upper() == "RRULE:":
        body = body[6:].strip()
    if not body:
        raise ScheduleError(_("RRULE: the rule is empty (expected something like FREQ=DAILY)"))
    parts: dict[str, str] = {}
    for chunk in body.split(";"):
        raw_name, equals, raw_value = chunk.partition("=")
        name, value = raw_name.strip().upper(), raw_value.strip()
        if not (equals and value and name in _SUPPORTED_NAMES):
            name, value = _split_part(chunk)  # refuses it, naming what is wrong
        if name in parts:
            raise ScheduleError(_("RRULE: {name} is given twice").format(name=name))
        parts[name] = value
    return parts


def _split_part(chunk: str) -> tuple[str, str]:
    if not chunk.strip():
        raise ScheduleError(_("RRULE: empty part (a stray ';')"))
    raw_name, equals, raw_value = chunk.partition("=")
    name = raw_name.strip().upper()
    if not equals or not _PART_NAME.fullmatch(name):
        raise ScheduleError(
            _("RRULE: {part!r} is not a NAME=VALUE part").format(part=chunk.strip())
        )
    if name in _UNSUPPORTED:
        raise ScheduleError(_("unsupported RRULE part {name}").format(name=name))
    if name not in _SUPPORTED_NAMES:
        raise ScheduleError(_("unknown RRULE part {name}").format(name=name))
    value = raw_value.strip()
    if not value:
        raise ScheduleError(_("RRULE {name}: no value given").format(name=name))
    return name, value


def _parse_freq(value: str) -> str:
    freq = value.upper()
    if freq == "SECONDLY":
        raise ScheduleError(
            _("RRULE FREQ: SECONDLY is not supported (the smallest unit is a minute)")
        )
    if freq not in _FREQUENCIES:
        raise ScheduleError(
            _("RRULE FREQ: {value!r} is not one of {known}").format(
                value=value, known=", ".join(_FREQUENCIES)
            )
        )
    return freq


def _whole_number(name: str, text: str) -> int:
    if text.isascii() and text.isdigit() and len(text) <= _MAX_DIGITS:
        return int(text)  # the common case: plain digits
    digits = text.strip()
    if not _WHOLE_NUMBER.fullmatch(digits):
        raise ScheduleError(
            _("RRULE {name}: {text!r} is not a whole number").format(name=name, text=text)
        )
    if len(digits.lstrip("+-")) > _MAX_DIGITS:
        raise ScheduleError(
            _("RRULE {name}: {number} is too large").format(name=name, number=digits)
        )
    return int(digits)


def _positive(name: str, text: str) -> int:
    number = _whole_number(name, text)
    if number < 1:
        raise ScheduleError(
            _("RRULE {name}: {number} is out of range (it must be at least 1)").format(
                name=name, number=number
            )
        )
    return number


def _number_list(name: str, text: str, low: int, high: int) -> tuple[int, ...]:
    if _one_number(text, low, high):
        return (int(text),)
    numbers = [_whole_number(name, item) for item in text.split(",")]
    for number in numbers:
        if not low <= number <= high:
            raise ScheduleError(
                _("RRULE {name}: {number} is out of range {low}-{high}").format(
                    name=name, number=number, low=low, high=high
                )
            )
    return tuple(sorted(set(numbers)))


def _one_number(text: str, low: int, high: int) -> bool:
    """Whether ``text`` is one plain number in range: the common case, decided at once."""
    return len(text) <= 3 and text.isascii() and text.isdigit() and low <= int(text) <= high


def _set_positions(parts: dict[str, str]) -> tuple[int, ...]:
    """BYSETPOS picks among the times each period yields, so (RFC 5545 §3.3.10) it needs
    another BYxxx part to make that set; it counts from 1, or from the end with -1."""
    if not any(name.startswith("BY") and name != "BYSETPOS" for name in parts):
        raise ScheduleError(
            _(
                "RRULE BYSETPOS: it picks among the times another BY part gives (for example "
                "BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1), and none is given"
            )
        )
    return _signed_positions("BYSETPOS", parts["BYSETPOS"], 366)


def _signed_positions(name: str, text: str, most: int) -> tuple[int, ...]:
    """Positions counted from 1, or from the end with -1: never 0, at most ``most`` away."""
    if _one_number(text, 1, most):
        return (int(text),)
    positions = [_whole_number(name, item) for item in text.split(",")]
    for position in positions:
        if position == 0 or abs(position) > most:
            problem = (
                N_("RRULE {name}: {position} is not allowed (use 1..{most} or -{most}..-1)")
                if position == 0
                else N_("RRULE {name}: {position} is out of range (use 1..{most} or -{most}..-1)")
            )
            raise ScheduleError(_(problem).format(name=name, position=position, most=most))
    return tuple(sorted(set(positions)))


def _parse_byday(text: str, freq: str, with_bymonth: bool) -> tuple[tuple[int, int], ...]:
    scope = _ordinal_scope(freq, with_bymonth)
    days = [_parse_weekday(item.strip().upper(), scope) for item in text.split(",")]
    return tuple(sorted(set(days)))


def _ordinal_scope(freq: str, with_bymonth: bool) -> tuple[str, int] | None:
    """Where BYDAY ordinals are allowed and their largest size; None where they are not."""
    if freq == "MONTHLY":
        return "FREQ=MONTHLY", 5
    if freq == "YEARLY" and with_bymonth:  # RFC 5545: they then count within the month
        return N_("FREQ=YEARLY and BYMONTH"), 5
    return ("FREQ=YEARLY", 53) if freq == "YEARLY" else None


def _parse_weekday(token: str, scope: tuple[str, int] | None) -> tuple[int, int]:
    match = _WEEKDAY_TOKEN.fullmatch(token)
    if match is None or match[2] not in _WEEKDAYS:
        raise ScheduleError(
            _("RRULE BYDAY: {token!r} is not a weekday ({hint})").format(
                token=token, hint=_(_WEEKDAY_HINT)
            )
        )
    ordinal = 0 if match[1] is None else _check_ordinal(token, int(match[1]), scope)
    return _WEEKDAYS.index(match[2]), ordinal


def _check_ordinal(token: str, ordinal: int, scope: tuple[str, int] | None) -> int:
    if scope is None:
        raise ScheduleError(
            _("RRULE BYDAY: ordinal {token} is only allowed with FREQ=MONTHLY or YEARLY").format(
                token=token
            )
        )
    where, limit = scope
    if ordinal != 0 and abs(ordinal) <= limit:
        return ordinal
    problem = (
        N_("RRULE BYDAY: ordinal 0 in {token} is not allowed ({hint})")
        if ordinal == 0
        else N_("RRULE BYDAY: ordinal {token} is out of range ({hint})")
    )
    hint = _("use 1..{most} or -{most}..-1 with {where}").format(most=limit, where=_(where))
    raise ScheduleError(_(problem).format(token=token, hint=hint))


def _parse_wkst(value: str) -> int:
    day = value.upper()
    if day not in _WEEKDAYS:
        raise ScheduleError(
            _("RRULE WKST: {value!r} is not a weekday ({weekdays})").format(
                value=value, weekdays=", ".join(_WEEKDAYS)
            )
        )
    return _WEEKDAYS.index(day)


def _parse_until(value: str) -> _Until:
    text = value.upper()
    match = _UNTIL_VALUE.fullmatch(text)
    if match is None:
        raise ScheduleError(
            _(
                "RRULE UNTIL: {value!r} is not a date (YYYYMMDD) or a date-time "
                "(YYYYMMDDTHHMMSS local, or YYYYMMDDTHHMMSSZ in UTC)"
            ).format(value=value)
        )
    year, month, day, hour, minute, second, utc = match.groups()
    try:
        moment = datetime(int(year), int(month), int(day))
        if hour is not None:
            moment = moment.replace(hour=int(hour), minute=int(minute), second=int(second))
    except ValueError:
        raise ScheduleError(
            _("RRULE UNTIL: {value!r} is not a real date or time").format(value=value)
        ) from None
    check_year(moment, "RRULE UNTIL", ScheduleError)
    if hour is None:
        return _Until(moment.replace(hour=23, minute=59, second=59), text)
    return _Until(moment.replace(tzinfo=UTC) if utc else moment, text)


def _joined(numbers: tuple[int, ...]) -> str | None:
    return ",".join(str(number) for number in numbers) or None


def _weekday_text(day: int, ordinal: int) -> str:
    return f"{ordinal}{_WEEKDAYS[day]}" if ordinal else _WEEKDAYS[day]


def _require_naive(name: str, moment: datetime) -> None:
    if moment.tzinfo is not None:
        raise ValueError(f"{name} must be a naive local wall time, got {moment.isoformat()}")


# Expansion ----------------------------------------------------------------------------


def _expand(rule: _Rule, dtstart: datetime) -> _Expansion:
    """The dateutil arguments, defaulting from DTSTART exactly as ``rrule.__init__`` does."""
    freq = _FREQUENCIES[rule.freq]
    bymonth = rule.bymonth or None
    bymonthday = rule.bymonthday or None
    byweekday = tuple(_Weekday(day, ordinal or None) for day, ordinal in rule.byday) or None
    if bymonthday is None and byweekday is None:
        if freq == YEARLY:
            bymonth = bymonth or (dtstart.month,)
            bymonthday = (dtstart.day,)
        elif freq == MONTHLY:
            bymonthday = (dtstart.day,)
        elif freq == WEEKLY:
            byweekday = (_Weekday(dtstart.weekday()),)
    return _Expansion(
        freq=freq,
        interval=rule.interval,
        count=rule.count,
        wkst=rule.wkst,
        bymonth=bymonth,
        bymonthday=bymonthday,
        byweekday=byweekday,
        byhour=rule.byhour or ((dtstart.hour,) if freq < HOURLY else None),
        byminute=rule.byminute or ((dtstart.minute,) if freq < MINUTELY else None),
        bysetpos=rule.bysetpos or None,
    )


def _as_cron(expansion: _Expansion) -> CronSchedule | None:
    """The rule as a set of cron fields, when it is one; None otherwise.

    With INTERVAL=1 every period is visited, so whether a BY part limits or expands
    (RFC 5545 §3.3.10's table) no longer matters: the set is every minute that matches all
    the parts, DTSTART's defaults included. COUNT, BYSETPOS, BYDAY ordinals and days counted
    from the month's end depend on more than the minute itself, so those rules stay
    dateutil's. ``test_rrule.py`` checks the two paths give the same times.
    """
    if expansion.interval != 1 or expansion.count is not None or expansion.bysetpos:
        return None
    weekdays, monthdays = expansion.byweekday, expansion.bymonthday
    if weekdays and any(day.n for day in weekdays):
        return None
    if monthdays and monthdays[0] < 0:  # sorted: a day counted from the end comes first
        return None
    return CronSchedule.matching_all(
        minutes=expansion.byminute,
        hours=expansion.byhour,
        days_of_month=monthdays,
        months=expansion.bymonth,
        # dateutil counts weekdays from Monday (0), cron from Sunday (0).
        days_of_week=frozenset((day.weekday + 1) % 7 for day in weekdays) if weekdays else None,
    )


def _restart_point(expansion: _Expansion, dtstart: datetime, start: datetime) -> datetime:
    """The latest period start, a whole number of INTERVALs after DTSTART's period, that is
    not after ``start``; DTSTART itself when that is DTSTART's own period or COUNT is set
    (COUNT is counted from DTSTART, so iteration must begin there)."""
    if expansion.count is not None or start <= dtstart:
        return dtstart
    stride = expansion.interval * (7 if expansion.freq == WEEKLY else 1)
    first = _period_index(expansion, dtstart)
    aligned = first + (_period_index(expansion, start) - first) // stride * stride
    return dtstart if aligned == first else _period_start(expansion.freq, aligned)


def _period_index(expansion: _Expansion, moment: datetime) -> int:
    """Which period of FREQ holds ``moment``, counted in periods (weeks: in days, by the
    ordinal of the week's first day under WKST, as dateutil splits weeks)."""
    day = moment.toordinal()
    if expansion.freq == YEARLY:
        return moment.year
    if expansion.freq == MONTHLY:
        return moment.year * 12 + moment.month - 1
    if expansion.freq == WEEKLY:
        return day - (moment.weekday() - expansion.wkst) % 7
    hours = day * 24 + moment.hour
    if expansion.freq == DAILY:
        return day
    return hours if expansion.freq == HOURLY else hours * 60 + moment.minute


def _period_start(freq: _Frequency, index: int) -> datetime:
    if freq == YEARLY:
        return datetime(index, 1, 1)
    if freq == MONTHLY:
        return datetime(index // 12, index % 12 + 1, 1)
    if freq in (WEEKLY, DAILY):
        return datetime.fromordinal(index)
    minutes = index * 60 if freq == HOURLY else index
    days, minute_of_day = divmod(minutes, 24 * 60)
    return datetime.fromordinal(days) + timedelta(minutes=minute_of_day)


# Rules that can never produce a time ---------------------------------------------------
# dateutil would search such a rule up to the year 9999 (seconds of CPU on every call) or
# fail while iterating, so they are refused when they are parsed. Both checks are exact.


def _check_month_days(rule: _Rule, expansion: _Expansion) -> None:
    days = expansion.bymonthday
    if not days or min(map(abs, days)) <= 28:  # every month has its first 28 days
        return
    months = expansion.bymonth or tuple(range(1, 13))
    if any(abs(day) <= _LONGEST_MONTH[month - 1] for month in months for day in days):
        return
    problem = (
        N_(
            "RRULE BYMONTHDAY: no month in BYMONTH={months} has day {days}, so the rule would "
            "never produce a time"
        )
        if rule.bymonthday
        else N_(
            "RRULE BYMONTHDAY: no month in BYMONTH={months} has day {days} (the day comes "
            "from DTSTART), so the rule would never produce a time"
        )
    )
    raise ScheduleError(_(problem).format(months=_joined(months), days=_joined(days)))


def _check_week_reachable(rule: _Rule, dtstart: datetime) -> None:
    """DAILY, HOURLY and MINUTELY step through the week from DTSTART by INTERVAL, so they
    reach only every gcd(INTERVAL, week)-th day, hour or minute of it. BYDAY, and BYHOUR and
    BYMINUTE at the rule's own level or below it, must allow at least one of those."""
    unit = _UNIT_MINUTES.get(rule.freq)
    if unit is None:
        return
    step = gcd(rule.interval * unit, _MINUTES_PER_WEEK)
    if step == unit:  # every day, hour or minute of the week is reached
        return
    limits = _stepped_limits(rule)
    if not limits:
        return
    first = (dtstart.weekday() * 24 * 60 + dtstart.hour * 60 + dtstart.minute) // unit * unit
    if any(_reached_is_allowed(rule, p) for p in range(first % step, _MINUTES_PER_WEEK, step)):
        return
    raise ScheduleError(
        _(
            "RRULE: FREQ={freq};INTERVAL={interval} from {weekday} {time} never reaches a time "
            "allowed by {parts}, so the rule would never produce a time"
        ).format(
            freq=rule.freq,
            interval=rule.interval,
            weekday=_WEEKDAYS[dtstart.weekday()],
            time=f"{dtstart:%H:%M}",
            parts="/".join(limits),
        )
    )


def _stepped_limits(rule: _Rule) -> list[str]:
    """The parts that filter the positions DAILY, HOURLY or MINUTELY steps through."""
    given = {
        "BYDAY": bool(rule.byday),
        "BYHOUR": bool(rule.byhour),
        "BYMINUTE": bool(rule.byminute),
    }
    stepped = {"DAILY": ("BYDAY",), "HOURLY": ("BYDAY", "BYHOUR")}.get(rule.freq, tuple(given))
    return [name for name in stepped if given[name]]


def _reached_is_allowed(rule: _Rule, minute_of_week: int) -> bool:
    day, minute_of_day = divmod(minute_of_week, 24 * 60)
    hour, minute = divmod(minute_of_day, 60)
    return (
        (not rule.byday or any(day == allowed for allowed, _n in rule.byday))
        and (rule.freq == "DAILY" or not rule.byhour or hour in rule.byhour)
        and (rule.freq != "MINUTELY" or not rule.byminute or minute in rule.byminute)
    )
