"""The connection factory: same pragmas everywhere, private files, foreign files untouched."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import apsw
import pytest

from coven_core.store.connection import (
    BUSY_TIMEOUT_MS,
    foreign_database_check,
    open_connection,
    write_transaction,
)
from coven_core.store.errors import (
    ForeignFileError,
    StoreBug,
    StoreEnvironmentError,
)

APP_ID = 0x436F7665  # "Cove"
posix_only = pytest.mark.skipif(os.name != "posix", reason="POSIX permissions")


@pytest.fixture
def store(tmp_path: Path) -> Path:
    return tmp_path / "coven.db"


@pytest.fixture
def conn(store: Path) -> Iterator[apsw.Connection]:
    connection = open_connection(store, application_id=APP_ID)
    yield connection
    connection.close()


@pytest.fixture
def loose_umask() -> Iterator[None]:
    previous = os.umask(0o022)
    yield
    os.umask(previous)


def snapshot(directory: Path) -> dict[str, tuple[bytes, int, int]]:
    """Every file's bytes, mtime and mode: a refused file must not change at all."""
    return {
        path.name: (path.read_bytes(), path.stat().st_mtime_ns, path.stat().st_mode)
        for path in sorted(directory.iterdir())
    }


def mode_of(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


# Pragmas ------------------------------------------------------------------------------------


def test_pragmas_are_in_effect(conn: apsw.Connection) -> None:
    assert conn.pragma("journal_mode") == "wal"
    assert conn.pragma("synchronous") == 2
    assert conn.pragma("foreign_keys") == 1
    assert conn.pragma("trusted_schema") == 0
    assert conn.pragma("busy_timeout") == BUSY_TIMEOUT_MS == 5000


def test_plans_never_depend_on_bound_values(conn: apsw.Connection) -> None:
    """So a cached statement is not re-prepared each time its parameters are bound."""
    assert conn.config(apsw.SQLITE_DBCONFIG_ENABLE_QPSG, -1) == 1


def test_double_quoted_strings_are_identifiers_only(conn: apsw.Connection) -> None:
    with pytest.raises(apsw.SQLError, match="no such column"):
        conn.execute('SELECT "text"')


def test_foreign_keys_are_enforced(conn: apsw.Connection) -> None:
    conn.execute("CREATE TABLE parent (id INTEGER PRIMARY KEY)")
    conn.execute("CREATE TABLE child (parent_id INTEGER REFERENCES parent (id))")
    with pytest.raises(apsw.ConstraintError):
        conn.execute("INSERT INTO child VALUES (7)")


def test_wal_refused_by_the_vfs_is_an_environment_error(store: Path) -> None:
    # The unix-none VFS has no shared memory, so SQLite keeps a rollback journal.
    with pytest.raises(StoreEnvironmentError) as info:
        open_connection(store, vfs="unix-none")
    assert info.value.kind == "cantopen"
    assert "write-ahead logging" in str(info.value)


# Private files ------------------------------------------------------------------------------


@posix_only
@pytest.mark.usefixtures("loose_umask")
def test_new_store_and_companions_are_private(store: Path) -> None:
    connection = open_connection(store)
    try:
        with write_transaction(connection):
            connection.execute("CREATE TABLE t (x)")
        for name in ("coven.db", "coven.db-wal", "coven.db-shm"):
            assert mode_of(store.with_name(name)) == 0o600, name
    finally:
        connection.close()


@posix_only
@pytest.mark.usefixtures("loose_umask")
def test_umask_is_restored(store: Path) -> None:
    open_connection(store).close()
    assert os.umask(0o022) == 0o022


@posix_only
def test_existing_empty_file_becomes_a_store(store: Path) -> None:
    store.write_bytes(b"")
    os.chmod(store, 0o600)
    connection = open_connection(store, application_id=APP_ID)
    assert connection.pragma("journal_mode") == "wal"
    connection.close()


# Foreign files ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "content", [os.urandom(4096), b"hello", b"SQLite format 2\x00" + bytes(100)]
)
def test_non_sqlite_file_is_refused_unchanged(store: Path, content: bytes) -> None:
    store.write_bytes(content)
    before = snapshot(store.parent)
    with pytest.raises(ForeignFileError) as info:
        open_connection(store, application_id=APP_ID)
    assert "is not a Coven store (not a SQLite database); nothing was changed" in str(info.value)
    assert snapshot(store.parent) == before


def test_directory_at_the_store_path_is_refused(store: Path) -> None:
    store.mkdir()
    with pytest.raises(ForeignFileError, match="is a directory"):
        open_connection(store)


def make_foreign_database(path: Path, application_id: int = 0, table: bool = True) -> None:
    other = apsw.Connection(str(path))
    if table:
        other.execute("CREATE TABLE bookmarks (url TEXT)")
        other.execute("INSERT INTO bookmarks VALUES ('https://example.org')")
    if application_id:
        other.pragma("application_id", application_id)
    other.close()


@pytest.mark.parametrize(
    ("application_id", "table"), [(0, True), (0x12345678, True), (0x12345678, False)]
)
def test_another_applications_database_is_refused_unchanged(
    store: Path, application_id: int, table: bool
) -> None:
    make_foreign_database(store, application_id, table)
    before = snapshot(store.parent)
    with pytest.raises(ForeignFileError) as info:
        open_connection(store, application_id=APP_ID)
    assert "another application's SQLite database" in str(info.value)
    assert "nothing was changed" in str(info.value)
    assert snapshot(store.parent) == before


def test_our_own_store_is_accepted(store: Path) -> None:
    make_foreign_database(store, APP_ID)
    open_connection(store, application_id=APP_ID).close()


def test_foreign_check_writes_nothing(store: Path) -> None:
    make_foreign_database(store)
    before = snapshot(store.parent)
    reader = open_connection(store, readonly=True)
    with pytest.raises(ForeignFileError):
        foreign_database_check(reader, APP_ID)
    reader.close()
    assert snapshot(store.parent) == before


def test_foreign_check_accepts_a_new_empty_store(conn: apsw.Connection) -> None:
    foreign_database_check(conn, APP_ID)


# Read-only connections ----------------------------------------------------------------------


def test_readonly_connection_cannot_write(store: Path, conn: apsw.Connection) -> None:
    with write_transaction(conn):
        conn.execute("CREATE TABLE t (x)")
    reader = open_connection(store, readonly=True)
    try:
        assert reader.execute("SELECT count(*) FROM t").get == 0
        with pytest.raises(StoreEnvironmentError) as info, write_transaction(reader):
            reader.execute("INSERT INTO t VALUES (1)")
        assert info.value.kind == "readonly"
    finally:
        reader.close()


def test_readonly_open_of_a_missing_store_creates_nothing(store: Path) -> None:
    with pytest.raises(StoreEnvironmentError) as info:
        open_connection(store, readonly=True)
    assert info.value.kind == "cantopen"
    assert not store.exists()


# Write transactions -------------------------------------------------------------------------


def test_write_transaction_commits(store: Path, conn: apsw.Connection) -> None:
    with write_transaction(conn) as same:
        assert same is conn
        conn.execute("CREATE TABLE t (x)")
        conn.execute("INSERT INTO t VALUES (1)")
    assert not conn.in_transaction
    other = open_connection(store)
    assert other.execute("SELECT x FROM t").get == 1
    other.close()


def test_write_transaction_rolls_back_on_error(conn: apsw.Connection) -> None:
    with write_transaction(conn):
        conn.execute("CREATE TABLE t (x)")
    with pytest.raises(RuntimeError), write_transaction(conn):
        conn.execute("INSERT INTO t VALUES (1)")
        raise RuntimeError("boom")
    assert not conn.in_transaction
    assert conn.execute("SELECT count(*) FROM t").get == 0


def test_write_transaction_translates_errors(conn: apsw.Connection) -> None:
    with write_transaction(conn):
        conn.execute("CREATE TABLE t (x PRIMARY KEY)")
        conn.execute("INSERT INTO t VALUES (1)")
    with pytest.raises(StoreBug) as info, write_transaction(conn):
        conn.execute("INSERT INTO t VALUES (2)")
        conn.execute("INSERT INTO t VALUES (1)")
    assert isinstance(info.value.__cause__, apsw.ConstraintError)
    assert not conn.in_transaction
    assert conn.execute("SELECT count(*) FROM t").get == 1


def test_nested_write_transaction_is_a_bug(conn: apsw.Connection) -> None:
    with (
        write_transaction(conn),
        pytest.raises(StoreBug, match="already open"),
        write_transaction(conn),
    ):
        pass


def test_busy_store_is_a_transient_busy_error(store: Path, conn: apsw.Connection) -> None:
    holder = open_connection(store)
    holder.execute("BEGIN IMMEDIATE")
    try:
        conn.set_busy_timeout(20)
        with pytest.raises(StoreEnvironmentError) as info, write_transaction(conn):
            pytest.fail("the write lock is held elsewhere")
        assert info.value.kind == "busy"
        assert info.value.transient
        assert isinstance(info.value.__cause__, apsw.BusyError)
        assert "another Coven process holds the write lock" in str(info.value)
        assert not conn.in_transaction
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    with write_transaction(conn):  # usable once the lock is released
        conn.execute("CREATE TABLE t (x)")
