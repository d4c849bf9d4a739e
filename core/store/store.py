"""Opening a Coven store: location checks, the connection, the schema version.

Everything that touches SQLite goes through a :class:`Store`; the GUI never does.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from datetime import datetime
from pathlib import Path

import apsw

from coven_core.store.codec import instant_text
from coven_core.store.connection import (
    foreign_database_check,
    open_connection,
    write_transaction,
)
from coven_core.store.errors import SchemaTooNewError, translate_errors
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
    def open(cls, data_dir: Path, now: datetime, *, vfs: str | None = None) -> Store:
        """Open (creating if needed) the store in ``data_dir``, migrating it to this version.

        Refuses, without changing anything, a location that is not private, a file that is
        not a Coven store, or a store written by a newer major version.
        """
        data_dir = prepare_data_dir(data_dir)
        path = data_dir / STORE_FILE
        if path.exists():
            check_store_file(path)
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


def _user_version(conn: apsw.Connection) -> int:
    return int(scalar(conn, "PRAGMA user_version"))


def _migrate(conn: apsw.Connection, path: Path, now: datetime) -> None:
    with translate_errors():
        found = _user_version(conn)
    if found >> 16 > CURRENT.major:
        raise SchemaTooNewError(
            f"{path} was written by a newer Coven (schema {_version_text(found)}; this version "
            f"knows {_version_text(CURRENT.user_version)}). Nothing was changed: upgrade Coven."
        )
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


def _apply(conn: apsw.Connection, migration: Migration, now: datetime) -> None:
    with write_transaction(conn):
        migration.apply(conn)
        conn.execute(
            "INSERT INTO migrations (name, applied_at) VALUES (?, ?)",
            (migration.name, instant_text(now)),
        )
        conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        conn.execute(f"PRAGMA user_version = {migration.user_version}")
