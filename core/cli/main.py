"""``coven``: entry point, argument parsing and the exit-status contract.

Exit status: 0 success, 2 bad input (one line on stderr naming the problem, nothing on
stdout), 3 a conflict with what is stored.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from coven_core.cli import (
    attention_cmd,
    audit_cmd,
    daemon_cmd,
    doctor_cmd,
    explain_cmd,
    history_cmd,
    inspect_cmd,
    pause_cmd,
    preview_cmd,
    quarantine_cmd,
    reconcile_cmd,
    routine_cmd,
    run_cmd,
    status_cmd,
)
from coven_core.cli.arguments import (
    EXIT_BAD_INPUT,
    EXIT_CONFLICT,
    OneLineParser,
    add_global_options,
)
from coven_core.errors import CovenError
from coven_core.runs import Conflict


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(prog="coven", description="Coven: a scheduler that keeps its word.")
    add_global_options(parser)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=OneLineParser)
    commands.required = True
    preview_cmd.register(commands)
    routine_cmd.register(commands)
    pause_cmd.register(commands)
    run_cmd.register(commands)
    quarantine_cmd.register(commands)
    attention_cmd.register(commands)
    reconcile_cmd.register(commands)
    explain_cmd.register(commands)
    history_cmd.register(commands)
    inspect_cmd.register(commands)
    status_cmd.register(commands)
    audit_cmd.register(commands)
    doctor_cmd.register(commands)
    daemon_cmd.register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
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
