"""The floor of a supervisor with a group-committed journal (issue #24, CONTRACT §8).

§8 lets the runtime's shape change for speed — "one runner per attempt, a pool, a supervisor
with a group-committed journal" — as long as its promises hold. The grouped floor
(``group_floor``) measures group commit in the slots' own threads, with no runner process,
which §8 does not allow (commands are not children of the app). This floor is the supervisor
at its least: one long-lived process in a session of its own runs every slot's attempts, a
thread per slot, and appends their records to **one** journal, made durable by fsyncs the
waiting slots share (``group_floor.Group``); the slots commit their decisions and
settlements to one store, likewise grouped. The durable steps are every floor's
(``bench_dispatch.floor``): the decision committed, ``intent`` durable before the spawn,
``spawned`` and ``exited`` durable (and the outputs with their names, when not empty), the
settlement committed. The lag ends at the spawn, as the supervisor reports it.

Run as the supervisor: python3 -m benchmarks.supervisor_floor DIRECTORY FD [FD ...]
"""

from __future__ import annotations

import itertools
import json
import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from benchmarks.bench_dispatch import TRUE, floor_store, keep_outputs
from benchmarks.group_floor import Group
from coven_core.runner.journal import fsync_directory

ROOT = Path(__file__).resolve().parents[1]


class Supervised:
    """The slots' side: one store (grouped commits) and the supervisor process."""

    def __init__(self, directory: Path, slots: int) -> None:
        self._store = floor_store(directory)
        self._statements = Group(self._commit)
        self._ids = itertools.count()  # next() on a count is atomic: the slots share it
        pairs = [socket.socketpair() for _ in range(slots)]
        fds = [theirs.fileno() for _, theirs in pairs]
        self._server = subprocess.Popen(
            [sys.executable, "-m", "benchmarks.supervisor_floor", str(directory), *map(str, fds)],
            pass_fds=fds, start_new_session=True, stdin=subprocess.DEVNULL, cwd=ROOT,
        )  # fmt: skip
        for _, theirs in pairs:
            theirs.close()
        self.slots = [SupervisedSlot(self, ours) for ours, _ in pairs]
        self._closed = False

    def attempt(self, channel: socket.socket, replies) -> float:  # type: ignore[no-untyped-def]
        """One attempt through the supervisor; the epoch instant just before its spawn."""
        index = next(self._ids)
        self._statements.submit(("INSERT INTO attempts VALUES (?, 'dispatching', NULL)", (index,)))
        channel.sendall(b"%d\n" % index)
        at, code = replies.readline().split()
        self._statements.submit(
            ("UPDATE attempts SET state = 'settled', code = ? WHERE id = ?", (int(code), index))
        )
        return float(at)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        for slot in self.slots:
            slot.hang_up()  # end of file: its thread in the supervisor ends
        self._server.wait(timeout=10)
        self._store.close()

    def _commit(self, statements: list[tuple[str, tuple[object, ...]]]) -> None:
        self._store.execute("BEGIN IMMEDIATE")
        for statement, params in statements:
            self._store.execute(statement, params)
        self._store.execute("COMMIT")


class SupervisedSlot:
    """One slot's channel to the supervisor."""

    def __init__(self, supervised: Supervised, channel: socket.socket) -> None:
        self._supervised, self.channel = supervised, channel
        self._replies = channel.makefile("rb")

    def attempt(self) -> float:
        return self._supervised.attempt(self.channel, self._replies)

    def hang_up(self) -> None:
        self._replies.close()  # the socket closes only once its file has too
        self.channel.close()

    def close(self) -> None:
        self._supervised.close()


# -- the supervisor process -----------------------------------------------------------------
def main(argv: list[str]) -> int:
    directory, fds = Path(argv[0]), [int(fd) for fd in argv[1:]]
    journal = os.open(directory / "journal.jsonl", os.O_WRONLY | os.O_CREAT | os.O_EXCL
                      | os.O_APPEND | os.O_CLOEXEC, 0o600)  # fmt: skip
    fsync_directory(directory)  # its name, once for every attempt

    def append(records: list[dict[str, object]]) -> None:
        os.write(journal, "".join(json.dumps(r) + "\n" for r in records).encode())
        os.fsync(journal)

    records = Group(append)
    threads = [threading.Thread(target=_serve, args=(socket.socket(fileno=fd), records, directory))
               for fd in fds]  # fmt: skip
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    os.close(journal)
    return 0


def _serve(channel: socket.socket, records: Group, directory: Path) -> None:
    with channel, channel.makefile("rb") as requests:
        for line in requests:
            at, code = _attempt(int(line), records, directory)
            channel.sendall(f"{at!r} {code}\n".encode())


def _attempt(index: int, records: Group, directory: Path) -> tuple[float, int]:
    records.submit({"attempt": index, "event": "intent", "runner_pid": os.getpid()})
    (out_read, out_write), (err_read, err_write) = os.pipe(), os.pipe()
    actions = [(os.POSIX_SPAWN_DUP2, out_write, 1), (os.POSIX_SPAWN_DUP2, err_write, 2)]
    at = time.time()
    pid = os.posix_spawn(TRUE[0], list(TRUE), os.environ, file_actions=actions, setpgroup=0)
    os.close(out_write)
    os.close(err_write)
    records.submit({"attempt": index, "event": "spawned", "pid": pid})
    outputs = {f"{index}.stdout": _read_all(out_read), f"{index}.stderr": _read_all(err_read)}
    _, status = os.waitpid(pid, 0)
    keep_outputs(directory, outputs)
    records.submit({"attempt": index, "event": "exited", "status": status})
    return at, os.waitstatus_to_exitcode(status)


def _read_all(pipe: int) -> bytes:
    """The pipe's bytes to its end (one pipe after the other: enough for a command that
    prints little, as the other floors' runners read them)."""
    chunks = []
    while chunk := os.read(pipe, 65536):
        chunks.append(chunk)
    os.close(pipe)
    return b"".join(chunks)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
