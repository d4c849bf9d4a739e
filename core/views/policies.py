"""A revision's policies (DESIGN §14) for people and scripts: the fields ``routine show``
prints and ``--json`` carries, and the sentence that tells a policy's decision on a moment.

One place for both, so the CLI, ``inspect``, ``explain`` and the GUI say the same thing.
"""

from __future__ import annotations

import json
import shlex
from datetime import timedelta
from typing import Any

from coven_core.model import RevisionSpec
from coven_core.notation.durations import format_duration
from coven_core.notation.i18n import N_, _, ngettext
from coven_core.schedule.exclusions import dates_text
from coven_core.schedule.timetable import AFTER_ONLY
from coven_core.scheduling.cooldown import DEFAULT_CAP


def policy_json(spec: RevisionSpec) -> dict[str, Any]:
    runtime = spec.max_runtime_per_day
    return {
        "except_dates": [day.isoformat() for day in spec.except_dates],
        "shadow": spec.shadow,
        "max_runs_per_day": spec.max_runs_per_day,
        "max_runtime_per_day_seconds": None if runtime is None else runtime.total_seconds(),
        "cooldown_seconds": _seconds(spec.cooldown),
        "cooldown_max_seconds": _seconds(spec.cooldown_max),
        "group": spec.group,
        "after": spec.after,
        "after_outcome": spec.after_outcome if spec.after else None,
        "on_ac_power": spec.on_ac_power,
        "when_online": spec.when_online,
        "keep_awake": spec.keep_awake,
    }


def _seconds(delta: timedelta | None) -> float | None:
    return None if delta is None else delta.total_seconds()


def policy_fields(spec: RevisionSpec, locale: str | None) -> list[tuple[str, str]]:
    """The policies a revision sets, as (label, value) rows; none when it sets none (None:
    the locale messages are made in now)."""
    fields = []
    if spec.shadow:
        fields.append((_("Trial", locale), _("shadow: decided as if live, never started", locale)))
    if spec.except_dates:
        fields.append((_("Except", locale), dates_text(spec.except_dates)))
    budget = _budget_text(spec, locale)
    if budget:
        fields.append((_("Budget", locale), budget))
    if spec.cooldown is not None:
        most = format_duration(spec.cooldown_max or DEFAULT_CAP)
        text = _("{rest} after a failure, doubling up to {most}", locale)
        fields.append((_("Cooldown", locale), text.format(rest=format_duration(spec.cooldown),
                                                          most=most)))  # fmt: skip
    if spec.group is not None:
        text = _("{group} (one routine of the group runs at a time)", locale)
        fields.append((_("Group", locale), text.format(group=spec.group)))
    if spec.after is not None:
        text = (_("when a run of {routine} succeeds", locale) if spec.after_outcome == "succeeded"
                else _("when a run of {routine} ends, however it ends", locale))  # fmt: skip
        fields.append((_("After", locale), text.format(routine=spec.after)))
    conditions = _conditions_text(spec, locale)
    if conditions:
        fields.append((_("Conditions", locale), conditions))
    if spec.keep_awake:
        fields.append((_("Awake", locale), _("the machine stays awake while it runs", locale)))
    return fields


def _conditions_text(spec: RevisionSpec, locale: str | None) -> str:
    parts = []
    if spec.on_ac_power:
        parts.append(_("on AC power", locale))
    if spec.when_online:
        parts.append(_("when online", locale))
    if not parts:
        return ""
    waits = _("waits within its grace", locale)
    return f"{' · '.join(parts)} ({waits})"


def after_only(spec: RevisionSpec, locale: str | None) -> str | None:
    """``after up``: what stands for the schedule and the next run of a routine that only
    its upstream runs (schedule ``after``); None for a routine with a schedule."""
    if spec.after is None or spec.schedule.strip().lower() != AFTER_ONLY:
        return None
    text = (_("after {routine}", locale) if spec.after_outcome == "succeeded"
            else _("after {routine} ends", locale))  # fmt: skip
    return text.format(routine=spec.after)


def _budget_text(spec: RevisionSpec, locale: str | None) -> str:
    parts = []
    if spec.max_runs_per_day is not None:
        runs = spec.max_runs_per_day
        parts.append(ngettext("{count} run a day", "{count} runs a day", runs, locale).format(
            count=runs))  # fmt: skip
    if spec.max_runtime_per_day is not None:
        runtime = format_duration(spec.max_runtime_per_day)
        parts.append(_("{runtime} of run time a day", locale).format(runtime=runtime))
    return " · ".join(parts)


def decision_inputs(stored: str | None) -> dict[str, Any]:
    """The inputs stored with a policy decision (the occurrence's ``decision`` column)."""
    if not stored:
        return {}
    found = json.loads(stored)
    return found if isinstance(found, dict) else {}


def decision_sentence(reason: str | None, stored: str | None, locale: str) -> str | None:
    """What a policy decided on one occurrence and on what, in one sentence; None when no
    policy decided it."""
    inputs = decision_inputs(stored)
    why = _policy_sentence(reason, inputs, locale)
    if inputs.get("would") == "run":
        return _("A trial: it would have run {command}; nothing was started.", locale).format(
            command=shlex.join(inputs.get("command") or [])
        )
    if inputs.get("would") == "skip":
        skipped = _("A trial: it would have been skipped, and nothing was started.", locale)
        return skipped if why is None else f"{skipped} {why}"
    return why


def _policy_sentence(reason: str | None, inputs: dict[str, Any], locale: str) -> str | None:
    if reason == "excluded_date":
        return _("Its date, {date}, is one of the routine's exclusion dates.", locale).format(
            date=inputs.get("date", "?")
        )
    if reason == "budget_exhausted":
        return _("The budget of {day} was used up: {use}.", locale).format(
            day=inputs.get("day", "?"), use=_budget_use(inputs, locale)
        )
    if reason == "cooldown":
        failures = inputs.get("failures", 0)
        text = ngettext(
            "The routine was cooling down after {failures} failed run in a row, until {until}.",
            "The routine was cooling down after {failures} failed runs in a row, until {until}.",
            failures if isinstance(failures, int) else 0, locale,
        )  # fmt: skip
        return text.format(failures=failures, until=_utc_text(inputs.get("until")))
    if reason == "group_busy":
        return _("Routine {holder} of group {group} was running (run {run}).", locale).format(
            holder=inputs.get("holder", "?"), group=inputs.get("group", "?"),
            run=inputs.get("holder_run", "?"),
        )  # fmt: skip
    if reason == "condition_unmet":  # before the chain: a triggered moment may wait too
        return _("Its conditions were not met through its grace: {state}.", locale).format(
            state=_observed(inputs, locale)
        )
    if "upstream" in inputs:  # planned by a chain
        text = _TRIGGERED.get(str(inputs.get("outcome")), _TRIGGERED[""])
        return _(text, locale).format(
            routine=inputs.get("upstream_routine", "?"), upstream=inputs["upstream"]
        )
    if "conditions" in inputs:  # a person's run goes ahead whatever the conditions
        return _("A run by a person, started although {state}.", locale).format(
            state=_observed(inputs["conditions"], locale)
        )
    if "budget" in inputs:  # a person's run on a routine with a budget: counted and marked
        text = (
            _("A run by a person, counted in the budget of {day} ({use}), over it.", locale)
            if inputs.get("over_budget")
            else _("A run by a person, counted in the budget of {day} ({use}).", locale)
        )
        budget = inputs["budget"]
        return text.format(day=budget.get("day", "?"), use=_budget_use(budget, locale))
    return None


#: A chain's trigger in a sentence, by how the upstream run ended (its disposition).
_TRIGGERED = {
    "succeeded": N_("Triggered by routine {routine}: its occurrence {upstream} succeeded."),
    "failed": N_("Triggered by routine {routine}: its occurrence {upstream} failed."),
    "cancelled": N_("Triggered by routine {routine}: its occurrence {upstream} was cancelled."),
    "timed_out": N_("Triggered by routine {routine}: its occurrence {upstream} timed out."),
    "": N_("Triggered by routine {routine}: its occurrence {upstream} ended."),
}


def _observed(inputs: dict[str, Any], locale: str) -> str:
    """``the machine was on battery power (upower)``: each state a condition read."""
    said = {
        "battery": _("the machine was on battery power", locale),
        "ac": _("the machine was on AC power", locale),
        "offline": _("the machine was offline", locale),
        "online": _("the machine was online", locale),
        "unknown": _("the state could not be read", locale),
    }
    parts = []
    for name in ("power", "network"):
        if name in inputs:
            source = inputs.get(f"{name}_source", "?")
            parts.append(f"{said.get(inputs[name], inputs[name])} ({source})")
    return _(" and ", locale).join(parts) if parts else "?"


def _utc_text(stored: str | None) -> str:
    return "?" if stored is None else f"{stored[:10]} {stored[11:16]} UTC"


def _budget_use(inputs: dict[str, Any], locale: str) -> str:
    """``3 of 3 runs``, ``2h of 2h run time``: what the budget had used before this claim."""
    parts = []
    if "max_runs" in inputs:
        most = inputs["max_runs"]
        text = ngettext("{runs} of {most} run", "{runs} of {most} runs", most, locale)
        parts.append(text.format(runs=inputs.get("runs", 0), most=most))
    if "max_runtime_seconds" in inputs:
        used = format_duration(timedelta(seconds=inputs.get("runtime_seconds", 0)))
        most = format_duration(timedelta(seconds=inputs["max_runtime_seconds"]))
        parts.append(_("{used} of {most} run time", locale).format(used=used, most=most))
    return ", ".join(parts)
