"""Where another scheduler's DST behaviour differs from Coven's v1 policy (DESIGN §3).

Coven skips a wall time that does not exist and runs a repeated one once, at its first pass.
What the others do, and where we learnt it:

* **cron** (Vixie cron and cronie, cron(8) "Daylight Saving Time and other time changes"):
  changes of less than three hours are handled specially for jobs at a specific time — no
  ``*`` at the start of the minute or hour field. Such a job in a skipped interval runs right
  after the change; in a repeated interval it is not run again. Jobs with a ``*`` there are
  "scheduled normally": none in a skipped interval, again in a repeated one. A change of
  three hours or more is a clock correction: no special handling at all.
* **systemd** timers (checked with ``systemd-analyze calendar`` of systemd 252, which the
  export tests repeat): a wall time in a gap is not elapsed; in a fold it elapses once, at the
  first pass — Coven's policy. (systemd issue #5595 asks for a shift instead; #8647 reports
  timers missing the whole repeated hour, which is more than the calendar says.)
* **launchd** (macOS): launchd.plist(5) says nothing about DST. Jobs in the repeated hour have
  been reported to start twice (erikslab.com, 2008); what it does in a gap is unknown.
* **Kubernetes** CronJob with ``timeZone``: the controller asks robfig/cron v3 for the next
  time, which walks hours and minutes in absolute time. A gap's wall time is never reached
  (skipped; robfig/cron PR #541 describes the skip), and a fold's is reached on both passes
  (kubernetes/kubernetes#121594: "CronJob will be run twice, when switching to wintertime").
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from coven_core.notation.i18n import _
from coven_core.schedule.timetable import ScheduleKind, Timetable
from coven_core.tz.binding import BoundTime, LocalTimeKind
from coven_core.tz.notes import format_offset
from coven_core.tz.transitions import Transition, transition_for, transitions_between

#: cron(8): "Time changes of more than 3 hours are considered to be corrections to the clock".
_CRON_SPECIAL_LIMIT = timedelta(hours=3)


class Scheduler(enum.StrEnum):
    CRON = "cron"
    SYSTEMD = "systemd"
    LAUNCHD = "launchd"
    KUBERNETES = "kubernetes"


#: The name the app knows them by (``coven_core.queries``), beside Coven's own scheduler.
ForeignScheduler = Scheduler


@dataclass(frozen=True)
class DstDifference:
    """One moment where the other scheduler and Coven do different things."""

    scheduler: Scheduler
    local: datetime  # the wall time, naive, in the routine's zone
    kind: str  # "gap" or "fold"
    theirs: str
    ours: str

    @property
    def sentence(self) -> str:
        return f"{self.theirs}; {self.ours}"

    def to_json(self) -> dict[str, Any]:
        return {
            "scheduler": self.scheduler.value,
            "local": self.local.strftime("%Y-%m-%dT%H:%M:%S"),  # as every local: README
            "kind": self.kind,
            "theirs": self.theirs,
            "ours": self.ours,
        }


@dataclass(frozen=True)
class _Moment:
    """A gap or fold moment and the change that made it one."""

    bound: BoundTime
    change: Transition
    wildcard: bool  # cron: the minute or hour field starts with '*'

    @property
    def hm(self) -> str:
        return self.bound.local.strftime("%H:%M")

    @property
    def day(self) -> str:
        return self.bound.local.strftime("%Y-%m-%d")

    @property
    def size(self) -> timedelta:
        return abs(self.change.offset_after - self.change.offset_before)


def differences(
    timetable: Timetable,
    scheduler: Scheduler,
    start: datetime,
    end: datetime,
    *,
    wildcard: bool = False,
) -> tuple[DstDifference, ...]:
    """Every moment in ``[start, end)`` where ``scheduler`` would differ from Coven."""
    if timetable.kind is ScheduleKind.INTERVAL:
        return ()  # absolute time: DST does not touch it, here or there
    found: list[DstDifference] = []
    for change in transitions_between(timetable.zone, start, end):
        for bound in _moments_near(timetable, change):
            moment = _Moment(bound, change, wildcard)
            difference = _RULES[scheduler][bound.kind](moment)
            if difference is not None:
                kind = "gap" if bound.skipped else "fold"
                found.append(DstDifference(scheduler, bound.local, kind, *difference))
    return tuple(found)


def _moments_near(timetable: Timetable, change: Transition) -> list[BoundTime]:
    size = abs(change.offset_after - change.offset_before) + timedelta(minutes=1)
    return [
        bound
        for bound in timetable.moments_between(change.utc - size, change.utc + size)
        if bound.kind is not LocalTimeKind.REGULAR
        and transition_for(bound, timetable.zone) == change
    ]


_Words = tuple[str, str] | None


def _coven_skips(moment: _Moment) -> str:
    return _("Coven skips it")


def _coven_once(moment: _Moment) -> str:
    return _("Coven runs it once, at the first {time} ({offset})").format(
        time=moment.hm, offset=format_offset(moment.bound.offset)
    )


def _cron_gap(moment: _Moment) -> _Words:
    if moment.wildcard or moment.size >= _CRON_SPECIAL_LIMIT:
        return None  # not run by cron either
    after = moment.change.wall_after.strftime("%H:%M")
    theirs = _("cron would run {time} at {after} on {day}")
    return theirs.format(time=moment.hm, after=after, day=moment.day), _coven_skips(moment)


def _cron_fold(moment: _Moment) -> _Words:
    if not moment.wildcard and moment.size < _CRON_SPECIAL_LIMIT:
        return None  # cron avoids the second run, as Coven does
    return _twice(_("cron would run {time} twice on {day}"), moment)


def _same(moment: _Moment) -> _Words:
    return None


def _launchd_gap(moment: _Moment) -> _Words:
    theirs = _("what launchd does at {time} on {day} is unknown (a nonexistent time)")
    return theirs.format(time=moment.hm, day=moment.day), _coven_skips(moment)


def _launchd_fold(moment: _Moment) -> _Words:
    return _twice(_("launchd has been reported to run {time} twice on {day}"), moment)


def _kubernetes_fold(moment: _Moment) -> _Words:
    return _twice(_("Kubernetes would run {time} twice on {day}"), moment)


def _twice(theirs: str, moment: _Moment) -> _Words:
    """They run a repeated wall time on both passes; Coven runs it once."""
    return theirs.format(time=moment.hm, day=moment.day), _coven_once(moment)


_Rule = Callable[[_Moment], _Words]
_RULES: dict[Scheduler, dict[LocalTimeKind, _Rule]] = {
    Scheduler.CRON: {LocalTimeKind.NONEXISTENT: _cron_gap, LocalTimeKind.REPEATED: _cron_fold},
    Scheduler.SYSTEMD: {LocalTimeKind.NONEXISTENT: _same, LocalTimeKind.REPEATED: _same},
    Scheduler.LAUNCHD: {
        LocalTimeKind.NONEXISTENT: _launchd_gap,
        LocalTimeKind.REPEATED: _launchd_fold,
    },
    Scheduler.KUBERNETES: {
        LocalTimeKind.NONEXISTENT: _same,
        LocalTimeKind.REPEATED: _kubernetes_fold,
    },
}
