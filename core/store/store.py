"""Opening a Coven store: location checks, the connection, the schema version.

Everything that touches SQLite goes through a :class:`Store`; the GUI never does.
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from pathlib import Path

import apsw

from coven_core.notation.i18n import _
from coven_core.store.codec import instant_text
from coven_core.store.connection import (
    foreign_database_check,
    open_connection,
    write_transaction,
)
from coven_core.store.errors import (
    ForeignFileError,
    NoStoreError,
    SchemaTooNewError,
    translate_errors,
)
from coven_core.store.location import check_store_file, prepare_data_dir
from coven_core.store.query import scalar
from coven_core.store.schema import APPLICATION_ID, CURRENT, MIGRATIONS, Migration
from coven_core.store.wal import StoreConnection

STORE_FILE = "coven.db"


def _version_text(user_version: int) -> str:
    return f"{user_version >> 16}.{user_version & 0xFFFF}"


class Store:
    """An open store: one apsw connection, used from one thread at a time."""

    def __init__(self, conn: apsw.Connection, data_dir: Path) -> None:
        self.conn = conn
        self.data_dir = data_dir

    @property
    def path(self) -> Path:
        return self.data_dir / STORE_FILE

    @property
    def wake_dir(self) -> Path:
        return self.data_dir / "wake"

    @classmethod
    def open(
        cls, data_dir: Path, now: datetime, *, vfs: str | None = None, create: bool = True
    ) -> Store:
        """Open the store in ``data_dir``, migrating it to this version; with ``create``,
        make the directory and the store when there is none (else :class:`NoStoreError`).

        Refuses, without changing anything, a location that is not private, a file that is
        not a Coven store (an empty one included), or a store written by a newer major
        version.
        """
        if not create and not os.path.lexists(data_dir / STORE_FILE):
            raise NoStoreError(
                _("no Coven store in {path} yet: add a routine with coven routine add, or "
                  "pass --data-dir").format(path=data_dir)
            )  # fmt: skip
        data_dir = prepare_data_dir(data_dir)
        path = data_dir / STORE_FILE
        if path.exists():
            check_store_file(path)
            _refuse_empty_file(path)
        conn = open_connection(path, vfs=vfs, application_id=APPLICATION_ID)
        try:
            foreign_database_check(conn, APPLICATION_ID)
            _migrate(conn, path, now)
        except BaseException:
            conn.close()
            raise
        return cls(conn, data_dir)

    def write(self) -> AbstractContextManager[apsw.Connection]:
        """A write transaction (BEGIN IMMEDIATE). Never hold one across a wait on a process."""
        return write_transaction(self.conn)

    @contextmanager
    def read(self) -> Iterator[apsw.Connection]:
        """A consistent snapshot for several reads."""
        with translate_errors():
            self.conn.execute("BEGIN")
            try:
                yield self.conn
            finally:
                self.conn.execute("COMMIT")

    def data_version(self) -> int:
        """Changes whenever another connection commits (a cheap "anything new?" check)."""
        with translate_errors():
            return int(scalar(self.conn, "PRAGMA data_version"))

    def close(self) -> None:
        self.conn.close()


def _refuse_empty_file(path: Path) -> None:
    """An empty file where a store should be is damaged, never a new store to write over.

    A store Coven creates has its header before anything else runs on it; only a crash
    within its first milliseconds (or something else) leaves it empty."""
    wal = path.with_name(path.name + "-wal")
    if path.stat().st_size == 0 and not (wal.exists() and wal.stat().st_size > 0):
        said = _("{path} is empty: it is not a Coven store (damaged?). Nothing was changed. To "
                 "start over, move it away: {command}")  # fmt: skip
        raise ForeignFileError(said.format(path=path, command=_moved(path, ".empty")))


def _user_version(conn: apsw.Connection) -> int:
    return int(scalar(conn, "PRAGMA user_version"))


def _migrate(conn: apsw.Connection, path: Path, now: datetime) -> None:
    with translate_errors():
        found = _user_version(conn)
    if found >> 16 > CURRENT.major:
        raise SchemaTooNewError(
            _("{path} was written by a newer Coven (schema {found}; this version knows "
              "{known}). Nothing was changed: upgrade Coven.").format(
                path=path, found=_version_text(found), known=_version_text(CURRENT.user_version)
            )
        )  # fmt: skip
    _refuse_lowered_version(conn, path, found)
    pending = [migration for migration in MIGRATIONS if migration.user_version > found]
    for migration in pending:
        _apply(conn, migration, now)
    if pending:
        _fold_log(conn)


def _fold_log(conn: apsw.Connection) -> None:
    """Migrations rewrite the schema once, and a new store is a hundred pages of it: copy
    them into the database file and empty the log now, so that the log's size is what the
    passes write (DESIGN §11). Another process reading (busy) keeps the log as it is."""
    with translate_errors():
        try:
            in_log, copied = conn.wal_checkpoint(mode=apsw.SQLITE_CHECKPOINT_TRUNCATE)
        except (apsw.BusyError, apsw.LockedError):
            return
    if isinstance(conn, StoreConnection):
        conn.wal.note_checkpoint(in_log, copied)


def _refuse_lowered_version(conn: apsw.Connection, path: Path, found: int) -> None:
    """A store whose schema version is older than the migrations it records applied was
    changed by something other than Coven: migrating it again would fail halfway."""
    with translate_errors():
        recorded = _recorded_migrations(conn)
    ahead = [m.name for m in MIGRATIONS if m.user_version > found and m.name in recorded]
    if ahead:
        raise ForeignFileError(
            _("{path} is damaged or not Coven's: its schema version {found} is older than "
              "the migrations it records (up to {last}). Nothing was changed. To start over, "
              "move it away: {command}").format(
                path=path, found=_version_text(found), last=ahead[-1],
                command=_moved(path, ".damaged"),
            )
        )  # fmt: skip


def _moved(path: Path, suffix: str) -> str:
    """The command that moves a file Coven will not open out of its way."""
    return f"mv {shlex.quote(str(path))} {shlex.quote(str(path) + suffix)}"


def _recorded_migrations(conn: apsw.Connection) -> set[str]:
    if not scalar(conn, "SELECT count(*) FROM sqlite_schema WHERE name = 'migrations'"):
        return set()
    return {str(row[0]) for row in conn.execute("SELECT name FROM migrations")}


def _apply(conn: apsw.Connection, migration: Migration, now: datetime) -> None:
    with write_transaction(conn):
        migration.apply(conn)
        conn.execute(
            "INSERT INTO migrations (name, applied_at) VALUES (?, ?)",
            (migration.name, instant_text(now)),
        )
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute(f"PRAGMA user_version = {migration.user_version}")
