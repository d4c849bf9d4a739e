"""``python -m coven_core.runner.server FD``: a fork server that starts runners fast.

Starting a fresh Python interpreter per attempt costs many times what the command itself
does (bench_dispatch's rows "dispatch against that floor" and "start lag against the runner
floor" guard the difference). This small, **single-threaded** process has the runner already
loaded and forks one child per request; the child makes itself a session leader (``setsid``)
and becomes an ordinary runner — it journals, supervises and outlives the engine exactly as a
runner started with ``python -m coven_core.runner`` does. Nothing else changes: the fork
server only saves the interpreter's start-up.

Protocol, over the inherited stream socket FD, one line each way per request:
``RUN <attempt dir>\\n`` → ``PID <pid>\\n`` (or ``ERR <message>\\n``): a runner for that
attempt alone. ``POOL\\n``, sent with one descriptor (a stream socket, ``SCM_RIGHTS``) →
``PID <pid>\\n``: a pooled runner (``coven_core.runner.pool``) that takes its attempts from
that socket. End of file: exit. Finished runners are reaped by the kernel (SIGCHLD ignored
here, restored in each child).

The fork is taken off the engine's path: the server keeps one **spare** child, already
forked and in its own session, blocked on a pipe. A request hands the attempt directory to
the spare and is answered with its pid at once; the next spare is forked after the reply.
A spare that is never handed an attempt (the engine closed the socket) reads end of file and
exits without doing anything; one that died is replaced by a fork on the spot. The runner's
identity is unchanged: its pid and start time, which it journals first thing.
"""

from __future__ import annotations

import gc
import os
import signal
import socket
import sys
from collections.abc import Iterator

from coven_core.runner.main import main as run_attempt
from coven_core.runner.pool import serve as serve_pool
from coven_core.runner.stops import fork_holding_stops


def serve(connection: socket.socket) -> None:
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps finished runners
    # Everything loaded so far goes to the collector's permanent generation: a runner's
    # collections then never walk (and so never write to) the pages it shares with this
    # process, each of which the kernel would otherwise copy for it.
    gc.freeze()
    spare = Spare.fork(connection)
    try:
        for request, fds in _requests(connection):
            if request == "POOL" and len(fds) == 1:
                reply = _pooled(fds[0], connection, spare)
            else:
                _close_all(fds)
                reply, spare = _handle(request, spare, connection)
            connection.sendall(reply.encode())
            spare = spare or Spare.fork(connection)  # after the reply: off the engine's path
    finally:
        if spare is not None:
            spare.dismiss()


def _requests(connection: socket.socket) -> Iterator[tuple[str, list[int]]]:
    """Each request line with the descriptors that came with it, until end of file."""
    buffer, fds = b"", list[int]()
    while True:
        while b"\n" in buffer:
            line, _, buffer = buffer.partition(b"\n")
            yield line.decode("utf-8", "surrogateescape"), fds
            fds = []
        data, received, _flags, _address = socket.recv_fds(connection, 4096, 4)
        if not data:
            _close_all(fds + received)
            return
        buffer, fds = buffer + data, fds + received


def _close_all(fds: list[int]) -> None:
    for fd in fds:
        os.close(fd)


def _pooled(channel: int, connection: socket.socket, spare: Spare | None) -> str:
    """Fork a pooled runner for the engine's end of ``channel``; the reply."""
    try:
        pid = fork_holding_stops()
    except OSError as error:
        os.close(channel)
        return f"ERR fork failed: {error}\n"
    if pid == 0:
        code = 1
        try:
            _detach(connection)
            if spare is not None:
                spare.forget()  # its end of file must not wait for this runner
            os.set_inheritable(channel, False)  # never the command's
            code = serve_pool(socket.socket(fileno=channel))
        finally:
            os._exit(code)
    os.close(channel)
    return f"PID {pid}\n"


class Spare:
    """A forked child waiting on a pipe for the attempt it will run."""

    def __init__(self, pid: int, pipe: int) -> None:
        self.pid, self._pipe = pid, pipe

    @classmethod
    def fork(cls, connection: socket.socket) -> Spare | None:
        """A new spare, or None when the fork fails (the next request forks on the spot)."""
        read, write = os.pipe()
        try:
            pid = fork_holding_stops()
        except OSError:
            os.close(read)
            os.close(write)
            return None
        if pid == 0:
            os.close(write)
            _await_attempt(read, connection)
        os.close(read)
        return cls(pid, write)

    def hand(self, directory: str) -> bool:
        """Give the spare its attempt; False if it is gone (it then ran nothing)."""
        try:
            os.write(self._pipe, directory.encode("utf-8", "surrogateescape") + b"\n")
            return True
        except OSError:  # EPIPE: the spare died before it was handed anything
            return False
        finally:
            os.close(self._pipe)

    def forget(self) -> None:
        """In another child: let go of this spare's pipe without a word to it."""
        os.close(self._pipe)

    def dismiss(self) -> None:
        os.close(self._pipe)  # end of file: it exits having run nothing


def _handle(
    request: str, spare: Spare | None, connection: socket.socket
) -> tuple[str, Spare | None]:
    """The reply, and the spare still unused (None once it has been handed the attempt)."""
    verb, _, argument = request.partition(" ")
    if verb != "RUN" or not argument:
        return f"ERR unknown request {request[:40]!r}\n", spare
    if spare is not None and spare.hand(argument):
        return f"PID {spare.pid}\n", None
    try:
        pid = fork_holding_stops()
    except OSError as error:
        return f"ERR fork failed: {error}\n", None
    if pid == 0:
        _become_runner(argument, connection)
    return f"PID {pid}\n", None


def _await_attempt(pipe: int, connection: socket.socket) -> None:
    """In a spare: detach now, wait for the attempt, run it; never return."""
    code = 1
    try:
        _detach(connection)
        with os.fdopen(pipe, "rb") as handed:
            directory = handed.readline().decode("utf-8", "surrogateescape").rstrip("\n")
        code = run_attempt([directory]) if directory else 0
    finally:
        os._exit(code)


def _become_runner(directory: str, connection: socket.socket) -> None:
    """In the child: detach like a freshly started runner, run the attempt, never return."""
    code = 1
    try:
        _detach(connection)
        code = run_attempt([directory])
    finally:
        os._exit(code)


def _detach(connection: socket.socket) -> None:
    os.close(connection.detach())  # the server's end is no business of a runner's
    os.setsid()
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the runner waits for its command


def main(args: list[str]) -> int:
    if len(args) != 1 or not args[0].isdigit():
        print("usage: python -m coven_core.runner.server FD", file=sys.stderr)
        return 2
    with socket.socket(fileno=int(args[0])) as connection:
        serve(connection)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
