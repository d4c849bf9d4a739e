"""apsw errors split into the environment's fault and our bug, with a message that names it."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest

from coven_core.errors import CovenError
from coven_core.store.errors import (
    STORE_ERROR_KINDS,
    ForeignFileError,
    SchemaTooNewError,
    StoreBug,
    StoreEnvironmentError,
    StoreError,
    StoreLocationError,
    classify,
    translate_errors,
)

ENVIRONMENT_CASES = [
    (apsw.SQLITE_BUSY, "busy", True, "another Coven process holds the write lock"),
    (apsw.SQLITE_BUSY_RECOVERY, "busy", True, "recovering its journal"),
    (apsw.SQLITE_PROTOCOL, "busy", True, "locking failed"),
    (apsw.SQLITE_LOCKED, "locked", True, "locked by another connection"),
    (apsw.SQLITE_FULL, "full", False, "the disk is full"),
    (apsw.SQLITE_IOERR, "io", True, "input/output error"),
    (apsw.SQLITE_IOERR_WRITE, "io", True, "input/output error"),
    (apsw.SQLITE_READONLY, "readonly", False, "cannot be written"),
    (apsw.SQLITE_READONLY_DBMOVED, "readonly", False, "moved or deleted"),
    (apsw.SQLITE_CANTOPEN, "cantopen", False, "cannot be opened"),
    (apsw.SQLITE_PERM, "cantopen", False, "permission denied"),
    (apsw.SQLITE_CORRUPT, "corrupt", False, "damaged"),
    (apsw.SQLITE_NOTADB, "notadb", False, "not a SQLite database"),
    (apsw.SQLITE_NOMEM, "nomem", False, "out of memory"),
]

BUG_CODES = [
    apsw.SQLITE_CONSTRAINT,
    apsw.SQLITE_CONSTRAINT_UNIQUE,
    apsw.SQLITE_ERROR,
    apsw.SQLITE_MISUSE,
    apsw.SQLITE_RANGE,
    apsw.SQLITE_ABORT,
    apsw.SQLITE_MISMATCH,
    apsw.SQLITE_TOOBIG,
    apsw.SQLITE_AUTH,
    apsw.SQLITE_SCHEMA,
    apsw.SQLITE_INTERNAL,
]


@pytest.mark.parametrize(("code", "kind", "transient", "words"), ENVIRONMENT_CASES)
def test_environment_errors_are_classified_by_kind(
    code: int, kind: str, transient: bool, words: str
) -> None:
    original = apsw.exception_for(code)
    error = classify(original)
    assert isinstance(error, StoreEnvironmentError)
    assert error.kind == kind
    assert error.kind in STORE_ERROR_KINDS
    assert error.transient is transient
    assert words in str(error)
    assert error.__cause__ is original


@pytest.mark.parametrize("code", BUG_CODES)
def test_our_bugs_are_store_bugs(code: int) -> None:
    original = apsw.exception_for(code)
    error = classify(original)
    assert type(error) is StoreBug
    assert "a bug in Coven" in str(error)
    assert type(original).__name__ in str(error)
    assert error.__cause__ is original


def test_real_sql_error_keeps_sqlites_words() -> None:
    conn = apsw.Connection(":memory:")
    with pytest.raises(apsw.SQLError) as info:
        conn.execute("SELECT * FROM nowhere")
    error = classify(info.value)
    assert isinstance(error, StoreBug)
    assert "no such table: nowhere" in str(error)


def test_real_constraint_violation_is_a_bug() -> None:
    conn = apsw.Connection(":memory:")
    conn.execute("CREATE TABLE t (x INTEGER PRIMARY KEY)")
    conn.execute("INSERT INTO t VALUES (1)")
    with pytest.raises(apsw.ConstraintError) as info:
        conn.execute("INSERT INTO t VALUES (1)")
    assert "UNIQUE constraint failed" in str(classify(info.value))


def test_message_names_the_store() -> None:
    error = classify(apsw.exception_for(apsw.SQLITE_FULL), path=Path("/data/coven.db"))
    assert str(error).startswith("/data/coven.db: the disk is full")


def test_store_error_is_returned_unchanged() -> None:
    error = StoreLocationError("somewhere unsafe")
    assert classify(error) is error


def test_a_foreign_exception_becomes_a_bug() -> None:
    original = ValueError("odd")
    error = classify(original)
    assert isinstance(error, StoreBug)
    assert "ValueError: odd" in str(error)
    assert error.__cause__ is original


def test_translate_errors_reraises_classified() -> None:
    original = apsw.exception_for(apsw.SQLITE_BUSY)
    with pytest.raises(StoreEnvironmentError) as info, translate_errors(path="/s/coven.db"):
        raise original
    assert info.value.kind == "busy"
    assert info.value.__cause__ is original
    assert "/s/coven.db" in str(info.value)


@pytest.mark.parametrize("error", [ForeignFileError("x"), ValueError("y")])
def test_translate_errors_leaves_other_errors_alone(error: Exception) -> None:
    with pytest.raises(type(error)) as info, translate_errors():
        raise error
    assert info.value is error


def test_hierarchy() -> None:
    for cls in (StoreEnvironmentError, StoreBug, StoreLocationError, ForeignFileError):
        assert issubclass(cls, StoreError)
    assert issubclass(SchemaTooNewError, StoreError)
    assert issubclass(StoreError, CovenError)


def test_no_room_for_the_shared_memory_file_is_a_full_disk() -> None:
    # What a read on a full disk meets first (seen on a full tmpfs: errno ENOSPC): SQLite
    # says "disk I/O error", but the person must read that the disk is full.
    error = classify(apsw.exception_for(apsw.SQLITE_IOERR_SHMSIZE), path=Path("/d/coven.db"))
    assert isinstance(error, StoreEnvironmentError)
    assert error.kind == "full" and not error.transient
    assert "the disk is full" in str(error)
