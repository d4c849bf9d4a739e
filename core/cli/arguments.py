"""What the ``coven`` commands share: ``--data-dir`` and ``--json``, argument types, the
engine they open, and a parser that keeps a routine's command (after ``--``) whole."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import TYPE_CHECKING, Any, NoReturn

from coven_core.errors import ValidationError
from coven_core.notation.i18n import N_, _, written_down
from coven_core.notation.limits import whole_number

EXIT_BAD_INPUT = 2
EXIT_CONFLICT = 3
if TYPE_CHECKING:
    from coven_core.engine import Engine

_DATA_DIR_HELP = N_("the store's directory (default: $COVEN_DATA_DIR, else the user data dir)")


def add_global_options(parser: argparse.ArgumentParser) -> None:
    """``coven --data-dir DIR COMMAND``: the top-level parser's share."""
    parser.add_argument("--data-dir", metavar="DIR", help=_(_DATA_DIR_HELP))


def add_store_options(parser: argparse.ArgumentParser, *, json: bool = True) -> None:
    """``--data-dir`` after the command too, and ``--json``.

    SUPPRESS keeps a subcommand from overwriting a ``--data-dir`` given before it: argparse
    copies every default of a subparser onto the shared namespace.
    """
    parser.add_argument(
        "--data-dir", metavar="DIR", default=argparse.SUPPRESS, help=_(_DATA_DIR_HELP)
    )
    if json:
        parser.add_argument("--json", action="store_true", help=_("print one JSON object"))


def open_engine(data_dir: str | None, *, create: bool = False) -> Engine:
    """The engine, imported when a command opens it: ``coven preview`` never needs it."""
    from coven_core import engine

    return engine.open_engine(data_dir, create=create)


@contextmanager
def opened_engine(args: argparse.Namespace, *, create: bool = False) -> Iterator[Engine]:
    """The engine on the store; only a command that creates (``create``) makes a store where
    there is none: any other says there is none and leaves the disk as it was."""
    engine = open_engine(getattr(args, "data_dir", None), create=create)
    try:
        yield engine
    finally:
        engine.close()


def in_english_for_json(args: argparse.Namespace) -> AbstractContextManager[None]:
    """Sentences made meanwhile are English under ``--json`` (a script reads them, as the
    doctor's), in the reader's language otherwise."""
    return written_down() if getattr(args, "json", False) else nullcontext()


def non_empty(text: str) -> str:
    """A value that means something: not empty, not only spaces."""
    if not text.strip():
        raise argparse.ArgumentTypeError(_("must not be empty"))
    return text


def count(most: int, least: int = 1) -> Callable[[str], int]:
    """For ``type=``: a whole number in ``least..most`` (bounds: ``coven_core.notation.limits``)."""

    def number(text: str) -> int:
        try:
            return whole_number(text, most, least)
        except ValidationError as error:
            raise argparse.ArgumentTypeError(str(error)) from None

    return number


class OneLineParser(argparse.ArgumentParser):
    """argparse, but a usage error is one line on stderr and exit status 2."""

    def error(self, message: str) -> NoReturn:
        line = _("{prog}: error: {message}").format(prog=self.prog, message=message)
        self.exit(EXIT_BAD_INPUT, line + "\n")


class CommandTailParser(OneLineParser):
    """A subcommand parser that keeps everything after the first ``--`` as ``args.argv``.

    argparse alone cannot: a ``nargs="*"`` positional after NAME is consumed, empty, together
    with NAME. Parsers made with ``takes_command=False`` refuse a tail as an unknown argument.
    Usage errors are one line and exit status 2, as everywhere in ``coven``.
    """

    def __init__(self, *args: Any, takes_command: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.takes_command = takes_command

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        head, tail = _split_at_dashes(args)
        parsed, extras = super().parse_known_args(head, namespace)
        if tail is not None and self.takes_command:
            parsed.argv = tail
        elif tail is not None:
            extras = [*extras, "--", *tail]
        return parsed, extras


def _split_at_dashes(args: Sequence[str] | None) -> tuple[list[str] | None, list[str] | None]:
    if args is None:
        return None, None
    words = list(args)
    if "--" not in words:
        return words, None
    cut = words.index("--")
    return words[:cut], words[cut + 1 :]
