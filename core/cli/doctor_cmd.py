"""``coven doctor [--quick] [--json]``: check the store against Coven's promises (DESIGN §10).

People get one line per finding, grouped by check in a fixed order: ``✓`` for what holds
(info), ``!`` for a warning, ``✗`` for an error, then a summary line. ``--json`` prints
:meth:`coven_core.integrity.doctor.Report.to_json` (stable; documented in
:mod:`coven_core.integrity.doctor`).
``--quick`` runs SQLite's ``quick_check`` instead of the full integrity check and skips the
growth figures.

Exit status: 0 when there is no error (warnings allowed); 3 when there is at least one error —
the store contradicts its promises — with the report on stdout as usual and one line on
stderr counting the errors; 2 for bad input (an unknown option, a store that cannot be
opened), one line on stderr and nothing on stdout.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from coven_core.cli.arguments import EXIT_CONFLICT, add_store_options, opened_engine
from coven_core.cli.output import print_json
from coven_core.integrity.doctor import CHECKS, ERROR, INFO, WARNING, Finding, Report, doctor
from coven_core.notation.i18n import N_, _, ngettext, user_locale

_MARKS = {INFO: "✓", WARNING: "!", ERROR: "✗"}
_QUICK_HELP = N_("SQLite's quick_check instead of the full integrity check; no growth figures")


def register(commands: Any) -> None:
    parser = commands.add_parser(
        "doctor", help=_("check the store: integrity, permissions, invariants, audit, growth")
    )
    parser.add_argument("--quick", action="store_true", help=_(_QUICK_HELP))
    add_store_options(parser)
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    with opened_engine(args) as engine:
        report = doctor(engine.store, engine.clock.now_utc(), quick=args.quick)
    if args.json:
        print_json(report.to_json())
    else:
        _print_readable(report)
    if report.ok:
        return 0
    print(f"coven doctor: {_verdict_text(report)}", file=sys.stderr)
    return EXIT_CONFLICT


def _print_readable(report: Report) -> None:
    width, locale = max(len(name) for name in CHECKS), user_locale()
    for name in CHECKS:
        for finding in (f for f in report.findings if f.check == name):
            print(_line(finding, width, locale))
    print()
    print(_verdict_text(report))


def _line(finding: Finding, width: int, locale: str) -> str:
    return f"{_MARKS[finding.severity]} {finding.check:<{width}}  {finding.text(locale)}"


def _verdict_text(report: Report) -> str:
    locale = user_locale()
    errors, warnings = report.count(ERROR), report.count(WARNING)
    counts = _("{errors}, {warnings}", locale).format(
        errors=ngettext("{count} error", "{count} errors", errors, locale).format(count=errors),
        warnings=ngettext("{count} warning", "{count} warnings", warnings, locale).format(
            count=warnings
        ),
    )
    if errors:
        return counts + _(": the store contradicts its promises", locale)
    return counts + _(": the store keeps its promises", locale)
