"""``python -m coven_core.runner.server FD``: a fork server that starts runners in ~2 ms.

Starting a fresh Python interpreter per attempt costs ~50–100 ms here, against ~1–2 ms for
the command itself. This small, **single-threaded** process has the runner already loaded and
forks one child per request; the child makes itself a session leader (``setsid``) and becomes
an ordinary runner — it journals, supervises and outlives the engine exactly as a runner
started with ``python -m coven_core.runner`` does. Nothing else changes: the fork server only
saves the interpreter's start-up.

Protocol, over the inherited stream socket FD, one line each way per request:
``RUN <attempt dir>\\n`` → ``PID <pid>\\n`` (or ``ERR <message>\\n``). End of file: exit.
Finished runners are reaped by the kernel (SIGCHLD ignored here, restored in each child).
"""

from __future__ import annotations

import os
import signal
import socket
import sys

from coven_core.runner.main import main as run_attempt


def serve(connection: socket.socket) -> None:
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps finished runners
    with connection.makefile("rb") as reader:
        for line in reader:
            reply = _handle(line.decode("utf-8", "replace").rstrip("\n"), connection)
            connection.sendall(reply.encode())


def _handle(request: str, connection: socket.socket) -> str:
    verb, _, argument = request.partition(" ")
    if verb != "RUN" or not argument:
        return f"ERR unknown request {request[:40]!r}\n"
    try:
        pid = os.fork()
    except OSError as error:
        return f"ERR fork failed: {error}\n"
    if pid == 0:
        _become_runner(argument, connection)
    return f"PID {pid}\n"


def _become_runner(directory: str, connection: socket.socket) -> None:
    """In the child: detach like a freshly started runner, run the attempt, never return."""
    code = 1
    try:
        os.close(connection.detach())  # the server's end is no business of a runner's
        os.setsid()
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the runner waits for its command
        code = run_attempt([directory])
    finally:
        os._exit(code)


def main(args: list[str]) -> int:
    if len(args) != 1 or not args[0].isdigit():
        print("usage: python -m coven_core.runner.server FD", file=sys.stderr)
        return 2
    with socket.socket(fileno=int(args[0])) as connection:
        serve(connection)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
