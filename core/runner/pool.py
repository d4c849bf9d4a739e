"""A pooled runner: one runner process that does one attempt after another (DESIGN §8).

Forking a runner per attempt cost more CPU than everything else an attempt does: the fork,
the pages a forked CPython copies as it touches its objects, its exit (``bench_apscheduler``'s
runner floors, "forked" against "pooled"). So the engine keeps a few runners, forked once by
the fork server (``POOL``), each with a stream socket of its own to the engine:

``SPEC <the spec as one line of JSON>\\n`` and ``RUN <attempt dir>\\n`` → the attempt,
exactly as a runner of its own runs it (journal, spawn, supervision, timeout, journaled end)
→ ``END <status>\\n``. Then the next. The runner makes the attempt's directory and keeps the
spec in memory: the scheduler's thread touches no file to start an attempt (creating files
was the largest part of a start on a slow disk), and the routine's environment is written
nowhere. ``END 4 <why>`` says that nothing could start (the directory or the journal could
not be made): the runner is the witness that nothing ran, where a missing journal alone
would prove nothing. Without ``SPEC`` it reads the directory's ``spec.json``.

What a runner of its own promises holds for each attempt:

- **It outlives the engine.** End of file on the socket (the engine closed it, or died) is
  read only between attempts: the attempt in hand is finished and journaled, then the runner
  exits. The next engine adopts it by its pid and start mark, as any runner, and it ends
  with that attempt.
- **A cancel is fenced to its attempt.** Whoever cancels writes the attempt's cancel file,
  then sends SIGUSR1 (``Wakeup(fenced=True)``): a signal meant for an attempt that has
  already ended finds no file in the one running now and stops nothing.
- **An attempt's end is its journal's.** A runner is done with an attempt once its journal
  holds the exit (or the failed spawn); the liveness checks that refuse a decision while
  something of a run lives ask for that, not for the runner's pid alone
  (``operations.stopping``, ``views.attention``).
- **Anything odd ends it.** An attempt whose outcome this runner did not journal (its own
  failure, a bad spec, a journal that already existed) ends the process, as it ended a
  runner of its own, so "the runner is gone, no outcome" keeps its meaning. So does SIGTERM,
  SIGINT or SIGHUP: the attempt in hand is stopped and journaled as cancelled, and no other
  is taken.
"""

from __future__ import annotations

import os
import select
import socket

from coven_core.runner.main import (
    EXIT_NOT_STARTED,
    EXIT_OUTCOME_JOURNALED,
    EXIT_USAGE,
    Wakeup,
    attempt_with_reason,
)

#: After these a runner takes the next attempt: the outcome is journaled, or nothing began.
_GOES_ON = (EXIT_OUTCOME_JOURNALED, EXIT_NOT_STARTED)


def serve(channel: socket.socket) -> int:
    """Run what the engine hands over until it lets go; the last attempt's status."""
    wakeup = Wakeup(fenced=True)
    requests = _Requests(channel, wakeup)
    status = EXIT_OUTCOME_JOURNALED
    while (request := requests.next()) is not None:
        directory, spec = request
        if not directory or (spec is None and not os.path.isdir(directory)):
            return EXIT_USAGE
        status, why = attempt_with_reason(directory, wakeup, spec)
        reply = f"END {status} {why}" if status == EXIT_NOT_STARTED else f"END {status}"
        if not _reply(channel, reply.replace("\n", " ") + "\n"):
            return status  # the engine is gone: the attempt is journaled, and we are done
        if status not in _GOES_ON or wakeup.runner_stopped:
            return status
    return status


def _reply(channel: socket.socket, line: str) -> bool:
    try:
        channel.sendall(line.encode())
        return True
    except OSError:
        return False


class _Requests:
    """The engine's ``RUN`` lines, read between attempts, while stop signals are heard."""

    def __init__(self, channel: socket.socket, wakeup: Wakeup) -> None:
        self._channel, self._wakeup = channel, wakeup
        self._buffer = b""
        self._poll = select.poll()
        for fd in (channel.fileno(), wakeup.fd):
            self._poll.register(fd, select.POLLIN)

    def next(self) -> tuple[str, str | None] | None:
        """The next attempt's directory ('' for a request not understood) and its spec, if
        the engine sent it; None when the engine has let go or the runner was stopped."""
        spec = None
        while (line := self._line()) is not None:
            verb, _, argument = line.partition(" ")
            if verb == "SPEC":
                spec = argument
                continue
            return (argument if verb == "RUN" else ""), spec
        return None

    def _line(self) -> str | None:
        while b"\n" not in self._buffer:
            if not self._fill():
                return None
        line, _, self._buffer = self._buffer.partition(b"\n")
        return line.decode("utf-8", "surrogateescape")

    def _fill(self) -> bool:
        ready = {fd for fd, _ in self._poll.poll()}
        self._wakeup.drain()  # between attempts only a stop of the runner itself counts
        if self._wakeup.runner_stopped:
            return False
        if self._channel.fileno() not in ready:
            return True
        try:
            chunk = self._channel.recv(4096)
        except OSError:
            chunk = b""
        self._buffer += chunk
        return bool(chunk)
