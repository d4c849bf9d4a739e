"""The options that describe a routine (``routine add`` and ``routine edit``) and what they
change in its :class:`RevisionSpec`."""

from __future__ import annotations

import argparse
import os
import re
from datetime import date
from typing import Any

from coven_core.cli.arguments import count
from coven_core.cli.durations import duration_argument, limit_argument, timeout_argument
from coven_core.errors import ValidationError
from coven_core.model import MisfirePolicy, OverlapPolicy
from coven_core.notation.i18n import _
from coven_core.notation.limits import MOST_QUARANTINE_AFTER, MOST_RETRIES, MOST_RUNS_PER_DAY
from coven_core.schedule import exclusions
from coven_core.schedule.timetable import AFTER_ONLY
from coven_core.scheduling import chains
from coven_core.tz.local import resolve_zone_key

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# The RevisionSpec fields an option can set; argparse stores each under the field's name.
SPEC_FIELDS = (
    "schedule", "timezone", "misfire", "grace", "overlap", "timeout", "retries", "idempotent",
    "cwd", "env", "argv", "shell", "stop_grace", "quarantine_after", "except_dates",
    "shadow", "max_runs_per_day", "max_runtime_per_day", "cooldown", "cooldown_max", "group",
    "after", "on_ac_power", "when_online", "keep_awake",
)  # fmt: skip


def add_spec_options(parser: argparse.ArgumentParser) -> None:
    """Every option defaults to absent (SUPPRESS), so ``edit`` can tell what was given."""
    option: Any = _suppressed(parser)
    # fmt: off
    option("--schedule", metavar="SPEC",
           help=_("cron, rrule:, every or once; after: none of its own (with --after)"))
    option("--tz", dest="timezone", metavar="ZONE", help=_("UTC, IANA or local"))
    option("--misfire", choices=[p.value for p in MisfirePolicy], help=_("default latest_only"))
    option("--grace", type=limit_argument, metavar="DURATION",
           help=_("e.g. 15m; none: no limit"))
    option("--overlap", choices=[p.value for p in OverlapPolicy], help=_("default skip"))
    option("--timeout", type=timeout_argument, metavar="DURATION",
           help=_("e.g. 2h; none: no limit; default (the default): coven config's"))
    option("--retries", type=count(MOST_RETRIES, 0), metavar="N",
           help=_("automatic retries (default 0)"))
    option("--idempotent", action=argparse.BooleanOptionalAction, help=_("safe to run twice"))
    option("--cwd", type=_directory, metavar="DIR", help=_("working directory"))
    option("--env", action="append", type=_env_pair, metavar="KEY=VALUE", help=_("repeatable"))
    option("--shell", action=argparse.BooleanOptionalAction,
           help=_("run COMMAND with /bin/sh -c"))
    option("--stop-grace", dest="stop_grace", type=duration_argument, metavar="DURATION",
           help=_("SIGTERM to SIGKILL on cancel or timeout (default 5s)"))
    option("--quarantine-after", dest="quarantine_after", metavar="N",
           type=count(MOST_QUARANTINE_AFTER, 0),
           help=_("failed occurrences in a row before quarantine (default 3; 0: never)"))
    option("--except", dest="except_dates", action="append", type=except_date,
           metavar="YYYY-MM-DD", help=_("skip the moments on this local date (repeatable; "
           "with edit, the dates given replace the old ones; none: no dates)"))
    option("--shadow", action=argparse.BooleanOptionalAction,
           help=_("a trial: decide every moment as if live, never start the command"))
    option("--live", dest="shadow", action="store_false",
           help=_("make a trial routine live (the same as --no-shadow)"))
    option("--max-runs-per-day", dest="max_runs_per_day", type=_count_or_none, metavar="N",
           help=_("runs a day (in the routine's zone) may start; none: no budget"))
    option("--max-runtime-per-day", dest="max_runtime_per_day", type=limit_argument,
           metavar="DURATION", help=_("run time a day may use, e.g. 2h; none: no budget"))
    option("--cooldown", type=limit_argument, metavar="DURATION",
           help=_("after a failed run, skip scheduled moments for this long, doubling after "
           "each further failure; a success resets it; none: no cooldown"))
    option("--cooldown-max", dest="cooldown_max", type=limit_argument, metavar="DURATION",
           help=_("the longest cooldown (default 1d)"))
    option("--group", type=_group_name, metavar="NAME",
           help=_("at most one routine of the group runs at a time; none: no group"))
    option("--after", type=_after, metavar="ROUTINE[:succeeded|:finished]",
           help=_("also run when ROUTINE's run succeeds (or, with :finished, ends in any way); "
           "none: no chain"))
    option("--on-ac-power", dest="on_ac_power", action=argparse.BooleanOptionalAction,
           help=_("run only on mains power: a moment on battery waits within its grace, then "
           "is skipped (condition_unmet)"))
    option("--when-online", dest="when_online", action=argparse.BooleanOptionalAction,
           help=_("run only with a network: a moment offline waits within its grace, then is "
           "skipped (condition_unmet)"))
    option("--keep-awake", dest="keep_awake", action=argparse.BooleanOptionalAction,
           help=_("keep the machine from sleeping while a run is active"))
    # fmt: on


def added_spec(args: argparse.Namespace) -> dict[str, Any]:
    """The fields of a new routine: ``--schedule`` and ``--tz`` are needed, except by a
    routine that only its upstream runs (``--after`` alone: schedule ``after``, zone
    ``local`` unless given — its days for budgets are the person's)."""
    changes = spec_changes(args)
    if "schedule" not in changes and changes.get("after") is not None:
        changes["schedule"] = AFTER_ONLY
        changes.setdefault("timezone", "local")
    missing = [flag for flag, name in (("--schedule", "schedule"), ("--tz", "timezone"))
               if name not in changes]  # fmt: skip
    if missing:
        raise ValidationError(
            f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} needed "
            "(a routine that only another one triggers needs --after ROUTINE instead)"
        )
    return changes


def _suppressed(parser: argparse.ArgumentParser) -> Any:
    def option(*names: str, **kwargs: Any) -> None:
        parser.add_argument(*names, default=argparse.SUPPRESS, **kwargs)

    return option


def spec_changes(args: argparse.Namespace) -> dict[str, Any]:
    """The RevisionSpec fields the command line gave, converted to their types."""
    given = vars(args)
    changes = {name: given[name] for name in SPEC_FIELDS if name in given}
    if "after" in changes:  # ROUTINE[:outcome]: two fields of the revision
        changes["after"], changes["after_outcome"] = changes["after"] or (None, "succeeded")
    if "timezone" in changes:
        changes["timezone"] = changes["timezone"].strip()
        changes["zone_source"] = "explicit"  # the engine records where `local` came from
    for name, convert in _CONVERSIONS.items():
        if name in changes:
            changes[name] = convert(changes[name])
    return changes


def _env(pairs: list[tuple[str, str]]) -> tuple[tuple[str, str], ...]:
    keys = [key for key, _value in pairs]
    for key in keys:
        if keys.count(key) > 1:
            raise ValidationError(f"--env: {key} is given twice; give each variable once")
    return tuple(sorted(pairs))


def _except_dates(dates: list[date | None]) -> tuple[date, ...]:
    return exclusions.normalised(day for day in dates if day is not None)


_CONVERSIONS: dict[str, Any] = {
    "except_dates": _except_dates,
    "misfire": MisfirePolicy,
    "overlap": OverlapPolicy,
    "env": _env,
    "argv": tuple,
}


def check_zone(changes: dict[str, Any]) -> str | None:
    """The zone key a change binds to (``local`` resolved), checked before the store opens."""
    return resolve_zone_key(changes["timezone"]) if "timezone" in changes else None


def _env_pair(text: str) -> tuple[str, str]:
    key, equals, value = text.partition("=")
    if not equals:
        raise argparse.ArgumentTypeError(_("{text!r} is not KEY=VALUE").format(text=text))
    if not _ENV_NAME.fullmatch(key):
        raise argparse.ArgumentTypeError(
            _(
                "{key!r} is not a valid variable name (letters, digits and _, not first a digit)"
            ).format(key=key)
        )
    return key, value


def _after(text: str) -> tuple[str, str] | None:
    if text.strip().lower() == "none":
        return None
    try:
        return chains.parse_after(text)
    except ValidationError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _group_name(text: str) -> str | None:
    name = text.strip()
    if not name:
        raise argparse.ArgumentTypeError(_("a group needs a name"))
    return None if name.lower() == "none" else name


def _count_or_none(text: str) -> int | None:
    return None if text.strip().lower() == "none" else count(MOST_RUNS_PER_DAY)(text)


def except_date(text: str) -> date | None:
    """An ``--except`` value: a local date, or None for ``none`` (no dates)."""
    if text.strip().lower() == "none":
        return None
    try:
        return exclusions.parse_date(text)
    except ValidationError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _directory(text: str) -> str:
    # A routine runs later, from the scheduler: a relative path would mean something else.
    # One that does not exist yet (a disk not mounted now) is stored with a warning.
    path = os.path.abspath(os.path.expanduser(text))
    if os.path.exists(path) and not os.path.isdir(path):
        raise argparse.ArgumentTypeError(f"{text!r} is not a directory")
    return path
