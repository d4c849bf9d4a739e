"""The floor with group commit: attempts that wait together share one fsync (issue #24).

Issue #24 names group commit first among the designs to measure: "several attempts' records
made durable by one fsync". This floor does the durable work per attempt that
``bench_dispatch.floor`` did before a runner's intent was no longer waited onto the disk (so
it compares designs that each make the intent durable; ``runner.journal``) — the decision
committed, ``intent`` durable before the command starts, ``spawned`` and ``exited``
durable (and the outputs with their names, when not empty), the settlement committed — but
every slot appends to **one** journal and writes to **one** store, and a record or a
statement is durable once a flush that began after it was queued has ended. The slots
waiting at the same moment share that flush (a leader does it, the others wait for it): the
way databases commit many transactions with one log fsync.

It runs in the slots' own threads, as the inline floor does: no runner process, so it is the
least any design with group commit pays here, whatever process does the journaling.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.bench_dispatch import TRUE, floor_store, keep_outputs
from coven_core.runner.journal import fsync_directory


class Group:
    """Leader and followers: :meth:`submit` returns once ``flush`` has made the item durable.

    Items queued while a flush runs wait for the next one, which takes them all: one flush
    for as many items as arrived meanwhile."""

    def __init__(self, flush: Callable[[list[Any]], None]) -> None:
        self._flush = flush
        self._turn = threading.Condition()
        self._pending: list[Any] = []
        self._queued = self._durable = 0
        self._flushing = False
        self._failure: BaseException | None = None  # a failed flush: nothing after is durable

    def submit(self, item: Any) -> None:
        with self._turn:
            self._pending.append(item)
            self._queued += 1
            mine = self._queued
            while self._durable < mine:
                if self._failure is not None:
                    raise RuntimeError("a group flush failed") from self._failure
                if self._flushing:
                    self._turn.wait()
                else:
                    self._lead()

    def _lead(self) -> None:
        """Flush everything queued so far; called holding the lock, which the flush runs
        without so that others can queue behind it."""
        batch, self._pending, upto = self._pending, [], self._queued
        self._flushing = True
        self._turn.release()
        try:
            self._flush(batch)
        except BaseException as error:
            self._failure = error
            raise
        else:
            self._durable = upto
        finally:
            self._turn.acquire()
            self._flushing = False
            self._turn.notify_all()


class GroupedFloor:
    """The slots' shared journal and store, each behind a :class:`Group`."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._store = floor_store(directory)
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND
        self._journal = os.open(directory / "journal.jsonl", flags, 0o600)
        fsync_directory(directory)  # its name, once for every attempt
        self._ids = itertools.count()  # next() on a count is atomic: the slots share it
        self._records = Group(self._append)
        self._statements = Group(self._commit)

    def attempt(self, on_start: Callable[[], None] | None = None) -> None:
        """One attempt, its durable steps each shared with whichever slots wait with it;
        ``on_start()`` is called just before the command starts."""
        index = next(self._ids)
        self._statements.submit(("INSERT INTO attempts VALUES (?, 'dispatching', NULL)", (index,)))
        self._records.submit({"attempt": index, "event": "intent"})
        if on_start is not None:
            on_start()
        done = subprocess.run(TRUE, capture_output=True, check=False)
        code = done.returncode
        self._records.submit({"attempt": index, "event": "spawned", "pid": 0})
        outputs = {f"{index}.stdout": done.stdout, f"{index}.stderr": done.stderr}
        keep_outputs(self.directory, outputs)
        self._records.submit({"attempt": index, "event": "exited", "exit_code": code})
        self._statements.submit(
            ("UPDATE attempts SET state = 'settled', code = ? WHERE id = ?", (code, index))
        )

    def close(self) -> None:
        os.close(self._journal)
        self._store.close()

    def _append(self, records: list[dict[str, object]]) -> None:
        os.write(self._journal, "".join(json.dumps(r) + "\n" for r in records).encode())
        os.fsync(self._journal)

    def _commit(self, statements: list[tuple[str, tuple[object, ...]]]) -> None:
        self._store.execute("BEGIN IMMEDIATE")
        for statement, params in statements:
            self._store.execute(statement, params)
        self._store.execute("COMMIT")
