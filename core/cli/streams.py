"""``coven`` when its reader goes away (``coven history | head -1``) or a person presses Ctrl-C.

A closed pipe is not an error of the command: its reader had what it wanted. The command has
usually done its work by then (an operator command commits before it prints), so from the
first write that finds the pipe closed, standard output goes to ``/dev/null``, the command
runs to its end, and ``coven`` exits with the command's own status — 0 when it did what was
asked, quietly. git exits 141 (killed by SIGPIPE) instead; under ``set -o pipefail`` that
reads as a failure of a command whose effect succeeded, and it would hide a real status (3
from ``stop``, say) behind the signal's. Ctrl-C ends a command with one line on stderr and
status 130 (128 + SIGINT, as shells report it); whatever transaction it interrupted is
rolled back, so nothing is half-written.
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Iterator
from typing import Any, TextIO, cast

EXIT_INTERRUPTED = 130


@contextlib.contextmanager
def reader_may_leave() -> Iterator[None]:
    """Within: writes to stdout after its reader has gone are dropped, not raised."""
    real = sys.stdout
    guarded = _UntilTheReaderLeaves(real)
    sys.stdout = cast(TextIO, guarded)
    try:
        yield
        guarded.flush()  # what is still buffered meets a closed pipe here, not at exit
    finally:
        sys.stdout = real


class _UntilTheReaderLeaves:
    """Standard output until a write or flush finds the pipe closed; ``/dev/null`` after."""

    def __init__(self, stream: TextIO) -> None:
        self._stream = stream

    def write(self, text: str) -> int:
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._reader_left()
            return len(text)

    def flush(self) -> None:
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._reader_left()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)

    def _reader_left(self) -> None:
        """Point the descriptor at ``/dev/null`` too: the interpreter flushes the real
        stdout once more at exit, and that flush must not find the pipe either."""
        with contextlib.suppress(OSError, ValueError, io.UnsupportedOperation):
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        self._stream = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - lives to exit
