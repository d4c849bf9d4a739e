"""``coven history NAME``: a routine's occurrences, newest first, and how each one ended."""

from __future__ import annotations

import argparse
from datetime import datetime
from typing import Any

from coven_core.cli.arguments import add_store_options, count, opened_engine
from coven_core.cli.output import print_json, print_table
from coven_core.cli.times import local_text, wall_text
from coven_core.notation.i18n import _, user_locale
from coven_core.notation.limits import MOST_LISTED
from coven_core.notation.utc import utc_text
from coven_core.queries import HistoryRow, history
from coven_core.views.policies import decision_sentence

DEFAULT_LIMIT = 20


def register(commands: Any) -> None:
    parser = commands.add_parser("history", help=_("a routine's occurrences, newest first"))
    parser.add_argument("name", metavar="NAME")
    parser.add_argument("--limit", type=count(MOST_LISTED), default=DEFAULT_LIMIT, metavar="N",
                        help=_("the newest N occurrences (default %(default)s)"))  # fmt: skip
    add_store_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    with opened_engine(args) as engine:
        view, rows = history(engine.store, args.name, args.limit)
    if args.json:
        print_json({"routine": view.routine.name, "occurrences": [r.to_json() for r in rows]})
    else:
        _print_readable(rows, view.zone)
    return 0


def _print_readable(rows: list[HistoryRow], zone_key: str) -> None:
    locale = user_locale()
    if not rows:
        print(_("No occurrences yet.", locale))
        return
    headers = ["UTC", _("Local time", locale), _("Outcome", locale), _("Reason", locale)]
    print_table(headers, [_row(row, zone_key, locale) for row in rows])


def _row(row: HistoryRow, zone_key: str, locale: str) -> list[str]:
    # Coalesced rows keep no wall time of their own; they are shown in the routine's zone.
    local = (
        wall_text(datetime.fromisoformat(row.local), locale)
        if row.local
        else local_text(row.utc, zone_key, locale)
    )
    outcome = row.disposition or row.state
    return [utc_text(row.utc), local, outcome, _reason(row, zone_key, locale)]


def _reason(row: HistoryRow, zone_key: str, locale: str) -> str:
    """``missed 42 (asleep) · first → last`` for a coalesced window, else the plain reason,
    with ``caught up (asleep)`` for the moment that ran late after it. A broken routine's
    window has no count: its moments could not be computed."""
    if row.window_first is None or row.window_last is None:
        why = decision_sentence(row.reason, row.decision, locale)
        said = row.reason or "" if why is None else f"{row.reason} · {why}"
        if row.cause is None:
            return said
        caught_up = f"caught up ({row.cause})"  # the latest missed moment, run late (DESIGN §3)
        return f"{said} · {caught_up}" if said else caught_up
    first = local_text(row.window_first, zone_key, locale, "short")
    last = local_text(row.window_last, zone_key, locale, "short")
    count = "" if row.window_count is None else f" {row.window_count}"
    cause = "" if row.cause in (None, row.reason) else f" ({row.cause})"  # broken: said once
    return f"{row.reason}{count}{cause} · {first} → {last}"
