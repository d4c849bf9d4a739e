"""Write-ahead-log checkpoints after COMMIT has returned, never inside it (issue #6, §11, §13).

SQLite's automatic checkpoint is a WAL hook: it runs inside the COMMIT statement, after the
transaction is durable and the write lock released. When its copy into the database file
fails, COMMIT reports that error "though the commit will have still occurred"
(https://sqlite.org/c3ref/wal_hook.html) — and a caller told "failed" acts as if nothing was
decided: the scheduler never started a claim it had committed.

So every connection the store factory opens is a :class:`StoreConnection`. Its WAL hook only
notes how long the log is and answers ``SQLITE_OK`` (registering it switches SQLite's own
automatic checkpoint off), so COMMIT reports exactly the transaction's fate.
:func:`~coven_core.store.connection.write_transaction` then calls :func:`after_commit`,
outside any transaction: once the log holds :data:`CHECKPOINT_PAGES` pages — SQLite's own
default threshold, so the log stays as bounded as before — it checkpoints (passive: it waits
for no reader and blocks no writer). A checkpoint that fails loses nothing (the log still
holds every committed page): the error is classified, logged, and the checkpoint is tried
again after the next commit.

Never run ``PRAGMA wal_autocheckpoint`` on a store connection: it reinstalls SQLite's hook.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import apsw

from coven_core.store.errors import StoreEnvironmentError, StoreError, classify

CHECKPOINT_PAGES = 1000
"""Pages in the log that call for a checkpoint (SQLite's ``SQLITE_DEFAULT_WAL_AUTOCHECKPOINT``)."""


class WalCheckpoints:
    """One connection's view of its write-ahead log, and its checkpoints."""

    def __init__(self, every: int = CHECKPOINT_PAGES) -> None:
        self.every = every  # pages in the log that call for a checkpoint
        self.pages = 0  # pages in the log not known to be copied, as of the last commit
        self.failed: StoreError | None = None  # the last failure, until a checkpoint succeeds
        self._deferred = 0

    def note_commit(self, conn: apsw.Connection, database: str, pages: int) -> int:
        """The WAL hook, called inside COMMIT once it is durable: note, never fail."""
        if database == "main":
            self.pages = pages
        return apsw.SQLITE_OK

    @property
    def due(self) -> bool:
        return not self._deferred and self.pages >= self.every

    def checkpoint(self, conn: apsw.Connection) -> bool:
        """Copy the log into the database now; False (logged, never raised) if that failed.

        Busy means another connection is checkpointing at this moment: it does the work."""
        try:
            counts = _passive_checkpoint(conn)
        except apsw.Error as exc:
            self._failed(classify(exc, path=conn.filename))
            return False
        if counts is None:
            return False
        self.note_checkpoint(*counts)
        return True

    def note_checkpoint(self, in_log: int, copied: int) -> None:
        """A checkpoint copied ``copied`` of the log's ``in_log`` pages."""
        self.pages, self.failed = max(in_log - copied, 0), None

    def _failed(self, error: StoreError) -> None:
        """The commit before stands whatever went wrong here, so nothing is raised; an error
        that is our bug is still logged as one."""
        import logging  # here, not at the top: a read-only `coven status` never logs

        self.failed = error
        level = logging.WARNING if isinstance(error, StoreEnvironmentError) else logging.ERROR
        logging.getLogger(__name__).log(
            level, "the write-ahead log was not checkpointed (every commit stands; Coven tries "
            "again after the next one): %s", error,
        )  # fmt: skip

    @contextmanager
    def deferred(self) -> Iterator[None]:
        """No checkpoint after each commit meanwhile: the caller checkpoints on its own
        schedule (a retention sweep, which times its transactions and checkpoints apart)."""
        self._deferred += 1
        try:
            yield
        finally:
            self._deferred -= 1


class StoreConnection(apsw.Connection):
    """An apsw connection whose log is checkpointed after COMMIT, never inside it."""

    def __init__(self, filename: str, flags: int, vfs: str | None) -> None:
        super().__init__(filename, flags=flags, vfs=vfs)
        self.wal = WalCheckpoints()
        self.set_wal_hook(self.wal.note_commit)  # replaces SQLite's automatic checkpoint


def log_pages(conn: apsw.Connection) -> int | None:
    """Pages in the log as of the last commit or checkpoint; None for a connection not opened
    by the store factory (SQLite's own checkpoint keeps its log)."""
    return conn.wal.pages if isinstance(conn, StoreConnection) else None


def checkpoint_now(conn: apsw.Connection) -> None:
    """A passive checkpoint now, outside any transaction, whatever the log's length; a store
    connection's count of pages in the log follows it. Busy means another connection is
    checkpointing at this moment: it does the work. Any other error is the caller's (a
    retention sweep stops, and is tried again later)."""
    counts = _passive_checkpoint(conn)
    if counts is not None and isinstance(conn, StoreConnection):
        conn.wal.note_checkpoint(*counts)


def _passive_checkpoint(conn: apsw.Connection) -> tuple[int, int] | None:
    """(pages in the log, pages copied), or None when another connection holds the
    checkpoint (busy). Other errors are raised."""
    try:
        in_log, copied = conn.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_PASSIVE)
    except (apsw.BusyError, apsw.LockedError):
        return None
    return in_log, copied


def after_commit(conn: apsw.Connection) -> None:
    """Checkpoint if the log has grown enough; call outside any transaction. A connection not
    opened by the store factory keeps SQLite's own automatic checkpoint."""
    if isinstance(conn, StoreConnection) and conn.wal.due:
        conn.wal.checkpoint(conn)


@contextmanager
def checkpoints_deferred(conn: apsw.Connection) -> Iterator[None]:
    """:meth:`WalCheckpoints.deferred` for a store connection (nothing for another one)."""
    if not isinstance(conn, StoreConnection):
        yield
        return
    with conn.wal.deferred():
        yield
