"""``coven``: entry point, argument parsing and the exit-status contract.

Exit status: 0 success, 2 bad input (one line on stderr naming the problem, nothing on
stdout), 3 a conflict with what is stored, 130 interrupted (Ctrl-C: one line on stderr,
nothing half-written). A reader that closes the pipe early changes none of these
(:mod:`coven_core.cli.streams`).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from coven_core.cli.argparse_words import in_our_words
from coven_core.cli.arguments import (
    EXIT_BAD_INPUT,
    EXIT_CONFLICT,
    OneLineParser,
    add_global_options,
)
from coven_core.cli.streams import EXIT_INTERRUPTED, reader_may_leave
from coven_core.errors import Conflict, CovenError
from coven_core.notation.i18n import _
from coven_core.tz.babel_zone import import_babel_dates_safely

# Before a command module imports babel.dates: an odd TZ must never end a command (issue 19).
import_babel_dates_safely()

#: Each command module and the commands it registers, in the order ``coven --help`` lists
#: them. A command line names one command, so only its module is imported: ``coven status``
#: does not pay for doctor, attention or the scheduler (``tests/core/cli/test_main.py``
#: checks this table against what the modules register).
COMMAND_MODULES: dict[str, tuple[str, ...]] = {
    "preview_cmd": ("preview",),
    "routine_cmd": ("routine",),
    "pause_cmd": ("pause", "resume"),
    "run_cmd": ("run-now", "cancel", "stop", "retry"),
    "quarantine_cmd": ("quarantine", "release", "probe"),
    "attention_cmd": ("attention",),
    "reconcile_cmd": ("reconcile",),
    "explain_cmd": ("explain",),
    "history_cmd": ("history",),
    "runs_cmd": ("runs", "run"),
    "inspect_cmd": ("list", "inspect"),
    "status_cmd": ("status",),
    "audit_cmd": ("audit",),
    "doctor_cmd": ("doctor",),
    "config_cmd": ("config",),
    "daemon_cmd": ("daemon",),
    "import_cmd": ("import",),
    "export_cmd": ("export",),
}
_MODULE_OF = {command: module for module, names in COMMAND_MODULES.items() for command in names}


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser; with ``argv`` naming a command, only that command's module is loaded."""
    parser = OneLineParser(prog="coven", description=_("Coven: a scheduler that keeps its word."))
    add_global_options(parser)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    commands.required = True
    named = _command_module(argv)
    for module in [named] if named else COMMAND_MODULES:
        importlib.import_module(f"coven_core.cli.{module}").register(commands)
    return parser


def _command_module(argv: Sequence[str] | None) -> str | None:
    """The module of the command ``argv`` names (skipping ``--data-dir DIR``), if any: for
    anything else (help, a typo) every command is registered, so argparse lists them all."""
    words = list(sys.argv[1:] if argv is None else argv)
    while words and words[0].startswith("-"):
        option = words.pop(0)
        if option == "--data-dir" and words:
            words.pop(0)
        elif not option.startswith("--data-dir="):
            return None  # -h, --help or an unknown option: the full parser answers
    return _MODULE_OF.get(words[0]) if words else None


def main(argv: Sequence[str] | None = None) -> int:
    try:
        with reader_may_leave():
            return _command(argv)
    except KeyboardInterrupt:
        print(_("coven: interrupted"), file=sys.stderr)
        return EXIT_INTERRUPTED


def _command(argv: Sequence[str] | None) -> int:
    with in_our_words():  # argparse's "usage:", "invalid choice" in the reader's language
        parser = build_parser(argv)
        args = parser.parse_args(argv)
    try:
        status: int = args.run(args)
    except Conflict as error:  # a CovenError too: it must be caught first
        return _refused(args, error, EXIT_CONFLICT)
    except CovenError as error:
        return _refused(args, error, EXIT_BAD_INPUT)
    return status


def _refused(args: argparse.Namespace, error: CovenError, status: int) -> int:
    print(f"coven {args.command}: {error}", file=sys.stderr)
    return status


if __name__ == "__main__":
    sys.exit(main())
