"""``coven runs [ROUTINE] [--limit N]`` and ``coven run show RUN``: every run's story, as the
desktop's Runs window tells it (issue #21), for a person without the GUI.

``runs`` lists occurrences newest first — of one routine or all — with how each ended in
words; ``run show`` prints one run in full: its attempts, the command line and working
directory it ran with, its decisions in sentences and the end of its output (with the files'
paths). Both have ``--json`` (the records of :mod:`coven_core.views.runs`). Neither marks a
run seen: that is the app's, when a person opens it.
"""

from __future__ import annotations

import argparse
from datetime import timedelta
from typing import Any

from coven_core.cli.arguments import add_store_options, count, opened_engine
from coven_core.cli.output import print_json, print_table
from coven_core.notation.durations import format_duration
from coven_core.notation.i18n import N_, _, user_locale
from coven_core.notation.limits import MOST_LISTED
from coven_core.notation.utc import local_seconds, utc_text
from coven_core.views.runs import AttemptLine, RunDetail, RunRow, run_detail, runs
from coven_core.views.story import caught_up

DEFAULT_LIMIT = 20


def register(commands: Any) -> None:
    listing = commands.add_parser("runs", help=_("runs newest first, with how each one ended"))
    listing.add_argument("routine", nargs="?", metavar="ROUTINE", help=_("only this routine"))
    listing.add_argument("--limit", type=count(MOST_LISTED), default=DEFAULT_LIMIT, metavar="N",
                         help=_("the newest N runs (default %(default)s)"))  # fmt: skip
    add_store_options(listing)
    listing.set_defaults(run=run_list)
    one = commands.add_parser("run", help=_("one run in full (coven run show RUN)"))
    actions = one.add_subparsers(dest="action", metavar="ACTION", required=True)
    show = actions.add_parser("show", help=_("a run's attempts, command, decisions and output"))
    show.add_argument("run_id", metavar="RUN", help=_("a run id or an occurrence id"))
    add_store_options(show)
    show.set_defaults(run=run_show)


def run_list(args: argparse.Namespace) -> int:
    with opened_engine(args) as engine:
        rows = runs(engine.store, args.routine, args.limit, now=engine.clock.now_utc())
    locale = user_locale()
    if args.json:
        print_json({"runs": [row.to_json() for row in rows]})
    elif not rows:
        print(_("No runs yet.", locale))
    else:
        print_table(_headers(locale), [_line(row, locale) for row in rows])
    return 0


def _headers(locale: str) -> list[str]:
    """The Runs window's words, where it has them (its "What happened" is the story)."""
    words = (N_("Routine"), N_("Outcome"), N_("Run"), N_("Duration"), N_("What happened"))
    return ["UTC", *(_(word, locale) for word in words)]


def _line(row: RunRow, locale: str) -> list[str]:
    # In the notation the command line reads durations in (--timeout 2h): 1h2m5s, not 3725s.
    took = "" if row.duration_seconds is None else format_duration(_whole(row.duration_seconds))
    return [utc_text(row.planned_utc), row.routine, row.outcome, row.run_id or "", took,
            _what(row, locale)]  # fmt: skip


def _what(row: RunRow, locale: str) -> str:
    """The engine's sentence, and what the UTC column cannot say: that someone asked for the
    run (its instant is when), or why it started long after its moment (as the Runs window
    says them: "By hand", "Caught up: …")."""
    parts = [row.reason]
    if row.by_hand:
        parts.insert(0, _("By hand", locale))
    if row.caught_up is not None:
        parts.append(caught_up(row.caught_up, locale))
    return " · ".join(parts)


def _whole(seconds: float) -> timedelta:
    return timedelta(seconds=round(seconds))


def run_show(args: argparse.Namespace) -> int:
    with opened_engine(args) as engine:
        detail = run_detail(engine.store, args.run_id, engine.clock.now_utc())
    if args.json:
        print_json(detail.to_json())
    else:
        print("\n".join(told(detail)))
    return 0


def told(detail: RunDetail, locale: str | None = None) -> list[str]:
    """The run's page as lines of text, in the user's words (outcomes and states stay the
    engine's words, as every listing of the command line keeps them)."""
    locale = locale or user_locale()
    row = detail.row
    local = local_seconds(row.planned_local) or "—"
    lines = [
        f"{row.routine} · {row.run_id or row.occurrence_id} · {row.outcome}",
        _("planned {utc} ({local} {zone})", locale).format(
            utc=utc_text(row.planned_utc), local=local, zone=row.zone
        ),
        row.reason,
        _("command: {command}", locale).format(command=detail.command),
        _("in: {folder}", locale).format(folder=detail.cwd or "—"),
    ]
    if detail.dst_note:
        lines.append(detail.dst_note)
    lines += [_attempt(attempt, locale) for attempt in detail.attempts]
    lines += [f"- {sentence}" for sentence in detail.decisions]
    for name, tail in (("stdout", detail.stdout), ("stderr", detail.stderr)):
        if tail.text:
            end = _(" (end only)", locale) if tail.truncated else ""
            lines += [f"--- {name} ({tail.path}){end}", tail.text.rstrip("\n")]
    return lines


def _attempt(attempt: AttemptLine, locale: str) -> str:
    line = _("attempt {number}: {state}, exit {exit}", locale).format(
        number=attempt.number, state=attempt.state,
        exit=_exit(attempt.exit_code, attempt.exit_signal, locale),
    )  # fmt: skip
    return f"{line}, {attempt.failure_class}" if attempt.failure_class else line


def _exit(code: int | None, signal: int | None, locale: str) -> str:
    if signal is not None:
        return _("signal {number}", locale).format(number=signal)
    return "—" if code is None else str(code)
