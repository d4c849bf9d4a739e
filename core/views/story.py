"""A run's story in sentences: how it ended and every step the engine took (issue #21).

One vocabulary for the run detail (:mod:`coven_core.views.runs`), what the engine tried on
a run that needs a person (:mod:`coven_core.views.attention`), notifications and the CLI:
``Skipped: the routine was paused``, ``Failed with exit 1; retried at 07:05 (attempt 2 of
3)``, ``Cancelled by a person: wrong disk``. English through gettext, times in the routine's
zone through Babel.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

import apsw
from babel.dates import format_time

from coven_core.notation.i18n import N_, _, ngettext, user_locale
from coven_core.notation.reasons import decided, failure_text, reason_text
from coven_core.store.codec import instant_from, maybe_instant_from

_SKIPPED = {
    "paused": N_("Skipped: the routine was paused"),
    "quarantined": N_("Skipped: the routine was quarantined"),
    "deleted": N_("Skipped: the routine was deleted"),
    "overlap": N_("Skipped: the previous run was still going"),
    "routine_broken": N_("Skipped: the routine was broken (its revision could not be loaded)"),
    "nonexistent_local_time": N_("Skipped: this wall time does not exist (a daylight-saving gap)"),
    "excluded_date": N_("Skipped: the date is excluded"),
    "budget_exhausted": N_("Skipped: the day's budget was used up"),
    "cooldown": N_("Skipped: the routine was cooling down after failures"),
    "group_busy": N_("Skipped: another routine of its group was running"),
    "condition_unmet": N_("Skipped: its conditions (AC power, network) were not met"),
}

_CAUSES = {
    "asleep": N_("while asleep"),
    "app_not_running": N_("while Coven was not running"),
    "clock_jump": N_("when the clock jumped"),
    "paused": N_("while paused"),
    "quarantined": N_("while quarantined"),
    "scheduler_late": N_("while the scheduler was late"),
    "routine_broken": N_("while the routine was broken"),
}

_CONSEQUENCES = {
    "succeeded": N_(
        "mark as succeeded: it counts as a success; the routine stays paused until you resume it"
    ),
    "failed": N_(
        "mark as failed: it counts as a failure; the routine stays paused until you resume it"
    ),
    "retry": N_(
        "retry: the command runs again now, so only choose this if you checked the first "
        "try left no side effect; the routine stays paused until you resume it"
    ),
}

#: A run a person decided, as its story tells it (the stored reason is English, DECIDED_AS).
_DECIDED = {
    "succeeded": N_("Marked as succeeded by {who}: {note}"),
    "failed": N_("Marked as failed by {who}: {note}"),
}
#: The decision's own step (recorded for a retry, which settles nothing).
_DECIDED_STEP = {
    "succeeded": N_("A person marked it as succeeded"),
    "failed": N_("A person marked it as failed"),
    "retry": N_("A person decided to run it again"),
}


@dataclass(frozen=True)
class Ending:
    """What a sentence about how a run ended needs to know."""

    disposition: str | None
    reason: str | None
    exit_code: int | None = None
    exit_signal: int | None = None
    cancel_by: str | None = None
    cancel_reason: str | None = None
    cause: str | None = None
    window_count: int | None = None


def decision_consequence(outcome: str, locale: str | None = None) -> str:
    """What a decision on a run awaiting a person will do, for the confirmation dialog."""
    return _(_CONSEQUENCES[str(outcome)], locale)


def missed(count: int | None, cause: str | None, locale: str | None = None) -> str:
    """``Missed 3 moments while asleep`` (a broken routine's window has no count)."""
    how = _how(cause, locale)
    if count is None:
        return _("Missed its moments {how}", locale).format(how=how)
    text = ngettext("Missed {count} moment {how}", "Missed {count} moments {how}", count, locale)
    return text.format(count=count, how=how)


def caught_up(cause: str, locale: str | None = None) -> str:
    """Why a run started late, where it is the latest of moments that passed with nothing
    run (``latest_only``): ``Caught up: its moment passed while Coven was not running``."""
    return _("Caught up: its moment passed {how}", locale).format(how=_how(cause, locale))


def _how(cause: str | None, locale: str | None) -> str:
    """``while asleep``: when moments passed with nothing run, for a missed cause."""
    return _(_CAUSES.get(cause or "", N_("while nothing could run")), locale)


def ending(end: Ending, locale: str | None = None) -> str:
    """How a run ended (or why a moment never ran), in one sentence."""
    disposition = end.disposition
    if disposition == "skipped" and end.reason == "missed":
        return missed(end.window_count, end.cause, locale)
    if disposition == "reconciled":
        return _decided(end, locale)
    if disposition == "skipped":
        text = _SKIPPED.get(end.reason or "")
        return _(text, locale) if text else _("Skipped: {reason}", locale).format(reason=end.reason)
    if disposition == "cancelled":
        return _cancelled(end, locale)
    if disposition == "timed_out":
        return _timed_out(end, locale)
    if end.reason:  # the engine's own words ("timed_out: stopped after its timeout") translated
        end = replace(end, reason=reason_text(end.reason, locale))
    return _ENDINGS.get(disposition or "", _other)(end, locale)


def _decided(end: Ending, locale: str | None) -> str:
    """``Marked as failed by ada: the disk was full``: which way, who, and why in their words
    (kept as typed); a reason in another form as it is."""
    parts = decided(end.reason)
    text = _DECIDED.get(parts["outcome"]) if parts else None
    if parts is None or text is None:
        return _("Decided by a person: {reason}", locale).format(reason=end.reason)
    return _(text, locale).format(who=parts["who"], note=parts["note"])


def _failed(end: Ending, locale: str | None) -> str:
    if end.exit_signal is not None:
        return _("Failed: killed by signal {signal}", locale).format(signal=end.exit_signal)
    if end.exit_code is not None:
        return _("Failed with exit {code}", locale).format(code=end.exit_code)
    return _("Failed: {reason}", locale).format(reason=end.reason or _("no exit status", locale))


def _cancelled(end: Ending, locale: str | None) -> str:
    """``Cancelled by a person (ada): wrong disk``; without the person (a run's story step),
    what the stored reason adds to "cancelled", if anything: ``Cancelled: stopped from
    outside Coven (SIGTERM to its runner)``, never ``Cancelled: cancelled: cancelled; not
    retried: it was stopped``."""
    if end.cancel_by is not None:
        text = _("Cancelled by a person ({who})", locale).format(who=end.cancel_by)
        return f"{text}: {end.cancel_reason}" if end.cancel_reason else text
    detail = _detail(end.reason or "", "cancelled", "cancelled")
    if not detail:
        return _("Cancelled", locale)
    return _("Cancelled: {reason}", locale).format(reason=reason_text(detail, locale))


def _timed_out(end: Ending, locale: str | None) -> str:
    """``Timed out``, never ``Timed out: timed_out: stopped after its timeout; not retried:
    it ran past its timeout`` (seen on the Runs page); what else the reason says, if any."""
    detail = _detail(end.reason or "", "timed_out", "stopped after its timeout")
    if not detail:
        return _("Timed out", locale)
    return _("Timed out: {reason}", locale).format(reason=reason_text(detail, locale))


def _detail(reason: str, failure: str, plain: str) -> str:
    """An attempt's reason as settlement stores it, ``{failure}: {message}; not retried: …``,
    without what the outcome's own word already says: its message, unless that is the
    ``plain`` one, which says nothing more. A reason in any other form is kept whole."""
    head, _colon, rest = reason.partition(": ")
    if head != failure:
        return reason
    message = rest.split("; ")[0]
    return "" if message == plain else message


def _shadowed(end: Ending, locale: str | None) -> str:
    """A trial routine's moment (DESIGN §14): what would have happened; nothing started."""
    if end.reason == "would_run":
        return _("Trial: would have run (nothing was started)", locale)
    live = ending(Ending("skipped", end.reason, cause=end.cause, window_count=end.window_count),
                  locale)  # fmt: skip
    return _("Trial (nothing was started) — would have been: {ending}", locale).format(ending=live)


def _other(end: Ending, locale: str | None) -> str:
    return end.reason or end.disposition or ""


_ENDINGS: dict[str, Callable[[Ending, str | None], str]] = {
    "succeeded": lambda end, locale: _("Succeeded", locale),
    "failed": _failed,
    "recovery_required": lambda end, locale: _("Needs your decision: {reason}", locale).format(
        reason=end.reason
    ),
    "shadowed": _shadowed,
}


@dataclass(frozen=True)
class Step:
    """One recorded step of a run (an event), as data and as a sentence."""

    at: datetime
    kind: str
    data: Mapping[str, Any]


def step_sentence(
    step: Step, zone: str, attempts_allowed: int | None = None, locale: str | None = None
) -> str:
    """One step in words; ``attempts_allowed`` (the retry policy's 1 + retries) numbers a
    retry ``attempt 2 of 3``."""
    data = step.data
    if step.kind == "retry_scheduled":
        return _retry(data, zone, attempts_allowed, locale)
    if step.kind == "settled":
        return ending(Ending(data.get("disposition"), data.get("reason")), locale)
    if step.kind == "reconciled" and data.get("outcome") in _DECIDED_STEP:
        return _(_DECIDED_STEP[data["outcome"]], locale)
    if caught_up_step(step):
        return caught_up(str(data["caught_up"]), locale)
    if step.kind == "skipped":
        skipped = Ending("skipped", data.get("reason"), cause=data.get("cause"),
                         window_count=data.get("count"))  # fmt: skip
        return ending(skipped, locale)
    text = _STEPS.get(step.kind)
    if text is None:
        return step.kind.replace("_", " ").capitalize()
    if isinstance(data.get("result"), str):  # a stop's result, in the engine's words
        data = {**data, "result": reason_text(data["result"], locale)}
    sentence = _(text, locale).format_map(_Known(data))
    reason = data.get("reason") if step.kind == "cancel_requested" else None
    return f"{sentence}: {reason}" if reason else sentence


class _Known(dict[str, Any]):
    """An event's data for a sentence: a value an older event lacks reads as ``?``."""

    def __missing__(self, key: str) -> str:
        return "?"


_STEPS = {
    "planned": N_("Planned"),
    "claimed": N_("Claimed to run"),
    "started": N_("Started (runner pid {pid})"),  # a pooled runner serves many attempts
    "manual_run": N_("Started by hand by {by}"),
    "adopted": N_("Adopted the still-running command after a restart"),
    "cancel_requested": N_("Cancel requested by {by}"),
    "cancel_sent": N_("Cancel sent to the runner"),
    "overrun": N_("Ran far longer than usual"),
    "stopped": N_("Stopped by a person: {result}"),
    "delivered": N_("Output delivered"),
    "delivery_failed": N_("Output could not be delivered"),
}


def _retry(data: Mapping[str, Any], zone: str, allowed: int | None, locale: str | None) -> str:
    if data.get("manual"):
        return _("Retried by a person ({who})", locale).format(who=data.get("by"))
    if data.get("delivery"):
        return _("Delivery tried again by a person ({who})", locale).format(who=data.get("by"))
    failure = failure_text(str(data.get("failure")), locale)  # "command failed", not its key
    failed = _("Failed ({failure})", locale).format(failure=failure)
    at = maybe_instant_from(data.get("not_before"))
    number = int(data.get("attempt") or 0) + 1
    when = _("retried at {time}", locale).format(time=clock_time(at, zone, locale)) if at else ""
    if allowed:
        attempt = _("attempt {number} of {allowed}", locale).format(number=number, allowed=allowed)
    else:
        attempt = _("attempt {number}", locale).format(number=number)
    return f"{failed}; {when} ({attempt})"


def clock_time(at: datetime, zone: str, locale: str | None = None) -> str:
    """``07:05`` / ``7:05 AM``: a time of day in the routine's zone."""
    return format_time(
        at.astimezone(ZoneInfo(zone)), format="short", locale=locale or user_locale()
    )


def steps(conn: apsw.Connection, occurrence_id: str) -> list[Step]:
    """An occurrence's recorded events, oldest first."""
    rows = conn.execute(
        "SELECT at, kind, data FROM events WHERE occurrence_id = ? ORDER BY seq", (occurrence_id,)
    )
    return [Step(instant_from(at), kind, json.loads(data)) for at, kind, data in rows]


def tried(
    conn: apsw.Connection, occurrence_id: str, zone: str, locale: str | None = None
) -> list[str]:
    """What the engine did about a run, as sentences, oldest first (its planning left out)."""
    return [
        step_sentence(step, zone, None, locale)
        for step in steps(conn, occurrence_id)
        if step.kind != "planned" or caught_up_step(step)
    ]


def caught_up_step(step: Step) -> bool:
    """The planning of a moment caught up late: a step worth telling, where a routine
    planning is not."""
    return step.kind == "planned" and bool(step.data.get("caught_up"))
