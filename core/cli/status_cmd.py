"""``coven status``: the scheduler at a glance — leader, last pass, next deadline, queue,
lags and the store's size (``--json``: :meth:`coven_core.views.status.Status.to_json`)."""

from __future__ import annotations

import argparse
from datetime import datetime
from typing import Any

from babel.numbers import format_decimal

from coven_core.cli.arguments import add_store_options, opened_engine
from coven_core.cli.output import print_fields, print_json, print_table
from coven_core.notation.i18n import _, user_locale
from coven_core.notation.quantities import duration_text, size_text
from coven_core.notation.utc import utc_text
from coven_core.views.status import Lags, Status, status


def register(commands: Any) -> None:
    parser = commands.add_parser("status", help=_("the scheduler's leader, last pass and queue"))
    add_store_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    with opened_engine(args) as engine:
        result = status(engine.store, engine.clock.now_utc())
    if args.json:
        print_json(result.to_json())
    else:
        _print_readable(result)
    return 0


def _print_readable(result: Status) -> None:
    locale = user_locale()
    deadline = "—" if result.next_deadline is None else utc_text(result.next_deadline)
    scheduling = _("paused", locale) if result.paused_all else _("on", locale)
    print_fields(
        [
            (_("Leader", locale), _leader_text(result, locale)),
            (_("Scheduling", locale), scheduling),
            (_("Last pass", locale), _last_pass_text(result.last_pass, locale)),
            (_("Next deadline", locale), deadline),
            (_("Queue depth", locale), str(result.queue_depth)),
            (_("Active", locale), str(result.active)),
            *_lag_fields(result.lags, locale),
            (_("Store size", locale), size_text(result.store_bytes, locale)),
            *[(_("Broken", locale), f"{name}: {why}") for name, why in result.broken.items()],
        ]
    )
    if result.counts:
        print()
        rows = [[state, str(n)] for state, n in sorted(result.counts.items())]
        print_table([_("Counts", locale), ""], rows)


def _lag_fields(lags: Lags, locale: str) -> list[tuple[str, str]]:
    return [
        (_("Oldest eligible", locale), duration_text(lags.oldest_eligible_age, locale)),
        (_("Planning lag", locale), duration_text(lags.planning_lag, locale)),
        (_("Start lag", locale), _start_lag_text(lags, locale)),
    ]


def _start_lag_text(lags: Lags, locale: str) -> str:
    """``p50 … · p99 … (N starts in the last hour)``: the sample count says how much to trust."""
    if lags.start_lag_samples == 0:
        return _("no starts in the last hour", locale)
    line = _("p50 {p50} · p99 {p99} ({count} starts in the last hour)", locale)
    return line.format(
        p50=duration_text(lags.start_lag_p50, locale),
        p99=duration_text(lags.start_lag_p99, locale),
        count=format_decimal(lags.start_lag_samples, locale=locale),
    )


def _leader_text(result: Status, locale: str) -> str:
    held = result.leader
    if held is None:
        return _("none (no scheduler has run on this store)", locale)
    alive = _("alive", locale) if result.leader_alive else _("gone", locale)
    return f"{held.fingerprint()} · generation {held.generation} · {alive}"


def _last_pass_text(last: dict[str, Any] | None, locale: str) -> str:
    if last is None:
        return _("none yet", locale)
    counts = ", ".join(f"{key} {last[key]}" for key in ("planned", "claimed", "dispatched",
                                                        "recovered", "settled"))  # fmt: skip
    error = f" · error {last['error_class']}" if last.get("error_class") else ""
    took = f"{float(last['duration_ms'] or 0):.0f} ms"
    started = utc_text(datetime.fromisoformat(last["started_at"]))
    return f"{started} ({last['trigger']}, {took}) · {counts}{error}"
