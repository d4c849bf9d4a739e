"""Attention items for people: per item a short block of evidence and the commands to decide."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from coven_core.cli.output import last_lines, print_fields, print_lines
from coven_core.cli.times import instant_in, local_text
from coven_core.notation.i18n import _, user_locale
from coven_core.notation.reasons import failure_text, reason_text
from coven_core.scheduling import overrun
from coven_core.views.attention import AttemptEvidence, Item

JOURNAL_RECORDS = 5
TAIL_LINES = 10
TRIED_STEPS = 12
DIGEST_SHOWN = 12
_FIELD, _NESTED, _LINE = "  ", "    ", "      "


def print_items(items: Sequence[Item], zones: Mapping[str, str], broken: Mapping[str, str]) -> None:
    """``zones``: each live routine's time zone by routine id (a deleted one's times are UTC);
    ``broken``: why each broken routine plans nothing, by name."""
    locale = user_locale()
    if not items and not broken:
        print(_("Nothing needs your attention.", locale))
        return
    for name, why in broken.items():
        print(f"routine_broken · {name}\n{_FIELD}{why}\n")
    for index, item in enumerate(items):
        if index:
            print()
        _print_item(item, zones.get(item.routine_id, "UTC"), locale)


def _print_item(item: Item, zone: str, locale: str) -> None:
    run = _("run {run}", locale).format(run=item.run_id or "—")
    print(f"{item.kind} · {run} · {item.routine}")
    print_fields(_summary(item, zone, locale), indent=_FIELD)
    for attempt in item.attempts:
        _print_attempt(attempt, zone, locale)
    _print_section(_("What the engine tried", locale), last_lines(item.tried, TRIED_STEPS))
    _print_section(_next_step_heading(item, locale), _next_steps(item))


def _summary(item: Item, zone: str, locale: str) -> list[tuple[str, str]]:
    fields = [
        (_("Scheduled", locale), f"{_time_text(item.scheduled_utc, zone, locale)} ({zone})"),
        (_("Occurrence", locale), item.occurrence_id),
        (_("Outcome", locale), item.disposition or "—"),
        (_("Reason", locale), reason_text(item.reason, locale) if item.reason else "—"),
    ]
    if item.delivery_error:
        fields.append((_("Delivery", locale), item.delivery_error))
    if item.kind == "overrun":
        overran = overrun.describe(item.running_seconds, item.usual_seconds, locale)
        fields.append((_("Overrun", locale), overran))
    digest = _("{short} (in full: coven attention --json)", locale)
    fields.append((_("Evidence", locale), digest.format(short=item.digest()[:DIGEST_SHOWN])))
    return fields


def _print_attempt(attempt: AttemptEvidence, zone: str, locale: str) -> None:
    outcome = (
        failure_text(attempt.failure_class, locale) if attempt.failure_class else attempt.state
    )
    message = f" — {reason_text(attempt.message, locale)}" if attempt.message else ""
    heading = _("Attempt {number}", locale).format(number=attempt.number)
    print(f"{_FIELD}{heading}: {outcome}{message}")
    print_fields(_attempt_fields(attempt, zone, locale), indent=_NESTED)
    _print_block(_("Journal", locale), _journal_lines(attempt, zone, locale), locale)
    _print_block("stdout", _tail_lines(attempt.stdout_tail), locale)
    _print_block("stderr", _tail_lines(attempt.stderr_tail), locale)


def _attempt_fields(attempt: AttemptEvidence, zone: str, locale: str) -> list[tuple[str, str]]:
    fields = [
        (_("Started", locale), _maybe_time_text(attempt.started_at, zone, locale)),
        _end_field(attempt, zone, locale),
        (_("Runner", locale), _process_text(attempt.runner_pid, attempt.runner_alive, locale)),
        (_("Command", locale), _process_text(attempt.command_pid, attempt.command_alive, locale)),
    ]
    if attempt.cancel_requested_at:
        asked = _maybe_time_text(attempt.cancel_requested_at, zone, locale)
        fields.append((_("Cancel asked", locale), asked))
    return fields


def _end_field(attempt: AttemptEvidence, zone: str, locale: str) -> tuple[str, str]:
    """When it exited, or, with no exit recorded, when Coven settled it (never "Exited" for a
    command that may still run)."""
    at = _maybe_time_text(attempt.exited_at, zone, locale)
    if not attempt.settled_without_exit:
        return _("Exited", locale), at
    return _("Settled", locale), _("{time}, no exit recorded", locale).format(time=at)


def _process_text(pid: int | None, alive: bool, locale: str) -> str:
    """Alive means that pid runs *and* its start time matches: a reused pid is not alive."""
    if pid is None:
        return _("no pid recorded", locale)
    state = _("alive", locale) if alive else _("gone", locale)
    return f"pid {pid} · {state}"


def _journal_lines(attempt: AttemptEvidence, zone: str, locale: str) -> list[str]:
    lines = [_record_text(record, zone, locale) for record in attempt.journal]
    problems = [_("problem: {p}", locale).format(p=p) for p in attempt.journal_problems]
    return last_lines(lines, JOURNAL_RECORDS) + problems


def _record_text(record: Mapping[str, Any], zone: str, locale: str) -> str:
    if "event" not in record:
        return _("unreadable: {line}", locale).format(line=record.get("unreadable", record))
    at = record.get("at")
    when = _time_text(at, zone, locale) if isinstance(at, str) else "—"
    return f"{when}  {record['event']}"


def _tail_lines(tail: str) -> list[str]:
    return [f"| {line}" for line in last_lines(tail.splitlines(), TAIL_LINES)]


def _print_block(label: str, lines: Sequence[str], locale: str) -> None:
    if not lines:
        none = _("(none)", locale)
        print(f"{_NESTED}{label}: {none}")
        return
    print(f"{_NESTED}{label}:")
    print_lines(lines, indent=_LINE)


def _print_section(heading: str, lines: Sequence[str]) -> None:
    if lines:
        print(f"{_FIELD}{heading}:")
        print_lines(lines, indent=_NESTED)


def _next_step_heading(item: Item, locale: str) -> str:
    if item.kind == "recovery_required":
        return _("Decide with one of", locale)
    return _("Look closer with", locale)


def _next_steps(item: Item) -> list[str]:
    """The exact commands: only a run whose outcome is unknown can be reconciled."""
    if item.kind == "overrun" and item.run_id is not None:
        return [f"coven inspect {item.run_id}", f"coven cancel {item.run_id} --reason TEXT"]
    if item.kind != "recovery_required" or item.run_id is None:
        return [f"coven inspect {item.run_id or item.occurrence_id}"]
    decide = f"coven reconcile {item.run_id} --as"
    return [
        f"{decide} succeeded --reason TEXT",
        f"{decide} failed --reason TEXT",
        f"{decide} retry --verified-no-side-effect --reason TEXT",
    ]


def _maybe_time_text(text: str | None, zone: str, locale: str) -> str:
    return "—" if text is None else _time_text(text, zone, locale)


def _time_text(text: str, zone: str, locale: str) -> str:
    """Babel in the routine's zone; a time that does not read as one is shown as stored."""
    instant = instant_in(text)
    return text if instant is None else local_text(instant, zone, locale)
