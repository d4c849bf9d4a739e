"""WAL checkpoints after COMMIT, never inside it (``coven_core.store.wal``)."""

from __future__ import annotations

import logging
import os
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import apsw
import pytest

from coven_core.store.connection import open_connection, write_transaction
from coven_core.store.errors import StoreBug, StoreEnvironmentError
from coven_core.store.wal import CHECKPOINT_PAGES, StoreConnection, checkpoints_deferred
from tests.core.conftest import T0, Engine
from tests.core.faults.vfs import FaultVFS, registered_vfs


@pytest.fixture
def vfs() -> Iterator[FaultVFS]:
    with registered_vfs() as built:
        yield built


@pytest.fixture
def conn(tmp_path: Path, vfs: FaultVFS) -> Iterator[StoreConnection]:
    connection = open_connection(tmp_path / "coven.db", vfs=vfs.vfs_name)
    assert isinstance(connection, StoreConnection)
    connection.execute("CREATE TABLE t (x BLOB)")
    yield connection
    vfs.clear()
    connection.close()


def commit_rows(conn: apsw.Connection, count: int, size: int = 100) -> None:
    for _ in range(count):
        with write_transaction(conn):
            conn.execute("INSERT INTO t VALUES (randomblob(?))", (size,))


def wal_bytes(conn: apsw.Connection) -> int:
    return os.path.getsize(conn.filename_wal)


def test_sqlite_does_not_checkpoint_inside_commit_on_a_store_connection(
    conn: StoreConnection,
) -> None:
    assert conn.pragma("wal_autocheckpoint") == 0  # SQLite's own hook is not installed
    assert conn.wal.every == CHECKPOINT_PAGES


def test_a_failing_checkpoint_leaves_the_commit_reported_as_it_was(
    conn: StoreConnection, vfs: FaultVFS, caplog: pytest.LogCaptureFixture
) -> None:
    conn.wal.every = 1
    vfs.arm("io", target="db")  # only a checkpoint writes the database file in WAL mode
    commit_rows(conn, 1)  # does not raise: the transaction committed
    assert vfs.raised >= 1
    failure = conn.wal.failed
    assert isinstance(failure, StoreEnvironmentError) and failure.kind == "io"
    assert str(conn.filename) in str(failure)
    assert "the write-ahead log was not checkpointed" in caplog.text
    other = apsw.Connection(conn.filename)
    assert other.execute("SELECT count(*) FROM t").get == 1  # durable, seen by another
    other.close()
    vfs.clear()
    commit_rows(conn, 1)  # the next commit checkpoints again
    assert conn.wal.failed is None and conn.wal.pages == 0


def test_a_checkpoint_that_hits_our_bug_is_logged_as_one_and_never_raised(
    conn: StoreConnection, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    def misuse(*args: object, **kwargs: object) -> tuple[int, int]:
        raise apsw.MisuseError("bad parameter or other API misuse")

    monkeypatch.setattr(conn, "wal_checkpoint", misuse)
    conn.wal.every = 1
    with caplog.at_level(logging.ERROR, logger="coven_core.store.wal"):
        commit_rows(conn, 1)
    assert isinstance(conn.wal.failed, StoreBug)
    assert [r.levelno for r in caplog.records] == [logging.ERROR]


def test_a_checkpoint_another_connection_is_running_is_no_failure(
    conn: StoreConnection, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    def busy(*args: object, **kwargs: object) -> tuple[int, int]:
        raise apsw.BusyError("database is locked")

    monkeypatch.setattr(conn, "wal_checkpoint", busy)
    conn.wal.every = 1
    commit_rows(conn, 3)
    assert conn.wal.failed is None and caplog.text == ""


def test_the_log_stays_bounded_over_many_commits(conn: StoreConnection) -> None:
    """Checkpoints happen after commits, so the log is reused from its start instead of
    growing: its size stays near the threshold however many commits there are."""
    conn.wal.every = 20
    page = int(conn.pragma("page_size"))
    bound = 32 + (conn.wal.every + 4) * (page + 24)  # header + frames: threshold + one commit
    largest = 0
    for _ in range(500):
        commit_rows(conn, 1)
        largest = max(largest, wal_bytes(conn))
    assert largest <= bound


def test_deferred_checkpoints_leave_it_to_the_caller(conn: StoreConnection) -> None:
    """What a retention sweep does (and the teeth of the bound above: without a checkpoint
    the log grows with every commit)."""
    conn.wal.every = 20
    page = int(conn.pragma("page_size"))
    with checkpoints_deferred(conn):
        commit_rows(conn, 100)
        assert wal_bytes(conn) > 32 + (conn.wal.every + 4) * (page + 24)
        assert conn.wal.pages > conn.wal.every
    assert conn.pragma("wal_autocheckpoint") == 0  # and SQLite's hook is still not back
    commit_rows(conn, 1)
    assert conn.wal.pages == 0  # checkpointed after the first commit past the deferral


def test_a_connection_not_from_the_factory_keeps_sqlites_own_checkpoint(tmp_path: Path) -> None:
    plain = apsw.Connection(str(tmp_path / "plain.db"))
    plain.pragma("journal_mode", "wal")
    with checkpoints_deferred(plain), write_transaction(plain):
        plain.execute("CREATE TABLE t (x)")
    assert plain.pragma("wal_autocheckpoint") == CHECKPOINT_PAGES
    plain.close()


def test_the_engine_keeps_its_log_bounded(engine: Engine) -> None:
    """Two hours of a minutely routine: every pass commits, the log never outgrows the
    threshold (plus one pass's pages), though SQLite no longer checkpoints by itself."""
    conn = engine.store.conn
    assert isinstance(conn, StoreConnection)
    conn.wal.every = 50
    page = int(conn.pragma("page_size"))
    engine.add("r", "* * * * *")
    largest = 0
    for half_hour in range(1, 5):
        engine.run_until(T0 + timedelta(minutes=30 * half_hour))
        largest = max(largest, wal_bytes(conn))
    assert len(engine.runtime.launches) == 2 * 60 + 1  # 12:00 through 14:00
    assert largest <= 32 + (conn.wal.every + 50) * (page + 24)
