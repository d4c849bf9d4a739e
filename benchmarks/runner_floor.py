"""The least a runner process per attempt costs: the floor's attempts, each run by a forked child.

DESIGN §8: commands are not children of the app; each attempt runs through a small runner
process (part of the engine, so Python) in its own session, which journals. The other floors
(``bench_dispatch.floor``) do the runner's fsyncs inline, in the benchmark's own threads, and
so leave out the one cost every design keeping §8 pays: a process per attempt. This one adds
it, as cheaply as a Python runner can be had: a tiny fork server (this interpreter, started
as ours is, loading only what it needs) forks a child per attempt, which does the floor's
runner work — the journal's first record and ``intent`` (not waited onto the disk, as ours),
``posix_spawn`` of the command with its output through pipes, ``spawned`` and the directory
fsync'd for the journal's name, ``exited`` fsync'd (and before it a file for each stream that
said anything, with its name) — and exits. No spare
is kept, no spec is read, no signal is handled, nothing is watched but the child's end: every
cost here is one ours also has.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path

from coven_core.runtime.runner import waiter

SERVER = r"""
import json, os, signal, socket, sys, time

FLAGS = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC


def journal(fd, record, sync=True):
    os.write(fd, (json.dumps(record) + "\n").encode())
    if sync:
        os.fsync(fd)


def attempt(directory, argv):
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # this child waits for its command
    name = lambda file: os.path.join(directory, file)
    log = os.open(name("journal.jsonl"), FLAGS | os.O_EXCL | os.O_APPEND, 0o644)
    journal(log, {"event": "runner_started", "runner_pid": os.getpid()}, sync=False)
    journal(log, {"event": "intent"}, sync=False)
    pipes = [os.pipe(), os.pipe()]
    at = time.time()
    actions = [(os.POSIX_SPAWN_DUP2, pipes[0][1], 1), (os.POSIX_SPAWN_DUP2, pipes[1][1], 2)]
    pid = os.posix_spawn(argv[0], argv, os.environ, file_actions=actions, setpgroup=0)
    journal(log, {"event": "spawned", "pid": pid, "at": at}, sync=False)
    sync_folder(directory)  # the journal's name, while the command runs
    for _, write in pipes:
        os.close(write)
    kept = [keep(name(stream), read) for stream, (read, _) in zip(("stdout", "stderr"), pipes)]
    _, status = os.waitpid(pid, 0)
    if any(kept):
        sync_folder(directory)  # the outputs' names
    journal(log, {"event": "exited", "status": status})
    os.close(log)


def keep(path, pipe):
    # The pipe's bytes into a file made with the first of them, fsync'd; whether any came.
    # (One pipe after the other: enough for a floor whose command prints little.)
    out = None
    while chunk := os.read(pipe, 65536):
        out = out if out is not None else os.open(path, FLAGS, 0o600)
        os.write(out, chunk)
    os.close(pipe)
    if out is not None:
        os.fsync(out)
        os.close(out)
    return out is not None


def sync_folder(directory):
    folder = os.open(directory, os.O_RDONLY)
    os.fsync(folder)
    os.close(folder)


def serve(connection, argv):
    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the kernel reaps finished runners
    if os.environ.get("FLOOR_POOLED"):
        return serve_pooled(connection, argv)
    with connection.makefile("rb") as requests:
        for line in requests:
            pid = os.fork()
            if pid == 0:
                code = 1
                try:
                    connection.close()
                    os.setsid()
                    attempt(line.decode().rstrip("\n"), argv)
                    code = 0
                finally:
                    os._exit(code)
            connection.sendall(b"%d\n" % pid)


def serve_pooled(connection, argv):
    # The pooled design: this process is itself a long-lived runner serving one attempt
    # after another, with no process made per attempt but the command's. Already in a
    # session of its own: it was started with one.
    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
    with connection.makefile("rb") as requests:
        for line in requests:
            attempt(line.decode().rstrip("\n"), argv)
            connection.sendall(b"%d\n" % os.getpid())


serve(socket.socket(fileno=int(sys.argv[1])), sys.argv[2:])
"""


class RunnerFloor:
    """The tiny fork server and its client: :meth:`run` one attempt, get its spawn instant.

    ``pooled``: the server is instead one long-lived runner that does each attempt itself,
    one after another (a pre-forked pool has one such runner per slot): the floor of a
    design with no runner process per attempt, for comparison (issue #24)."""

    def __init__(self, argv: tuple[str, ...], *, pooled: bool = False) -> None:
        ours, theirs = socket.socketpair()
        self.pooled = pooled
        self._server = subprocess.Popen(
            [sys.executable, "-c", SERVER, str(theirs.fileno()), *argv],
            pass_fds=[theirs.fileno()], start_new_session=True, stdin=subprocess.DEVNULL,
            env={**os.environ, "FLOOR_POOLED": "1"} if pooled else None,
        )  # fmt: skip
        theirs.close()
        self._socket, self._replies = ours, ours.makefile("rb")
        self._lock = threading.Lock()  # one request at a time, as with ours

    def run(self, directory: Path) -> float:
        """Run the command through a fresh runner in ``directory``, which must exist; the
        epoch instant just before its spawn, as the runner journaled it."""
        with self._lock:
            self._socket.sendall(f"{directory}\n".encode())
            pid = int(self._replies.readline())
        if not self.pooled:  # a pooled runner's reply comes when the attempt is done
            waiter(pid)()  # the engine's own wait for a runner that is not its child
        lines = (directory / "journal.jsonl").read_text(encoding="utf-8").splitlines()
        records = {record["event"]: record for record in map(json.loads, lines)}
        if "spawned" not in records or "exited" not in records:
            raise RuntimeError(f"the floor's runner in {directory} did not finish")
        return float(records["spawned"]["at"])

    def close(self) -> None:
        self._replies.close()
        self._socket.close()  # end of file: the server exits
        self._server.wait(timeout=10)
