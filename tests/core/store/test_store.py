"""Opening a store: migrations, schema version, and refusals that change nothing."""

from __future__ import annotations

import apsw
import pytest

from coven_core.store.errors import ForeignFileError, NoStoreError, SchemaTooNewError
from coven_core.store.schema import CURRENT, MIGRATIONS
from coven_core.store.store import STORE_FILE, Store
from tests.core.conftest import T0


def test_new_store_is_at_the_current_schema_with_our_application_id(tmp_path) -> None:
    store = Store.open(tmp_path / "d", T0)
    conn = store.conn
    assert conn.execute("PRAGMA user_version").fetchone()[0] == CURRENT.user_version
    assert conn.execute("PRAGMA application_id").fetchone()[0] == 0x436F766E
    assert [r[0] for r in conn.execute("SELECT name FROM migrations")] == [
        m.name for m in MIGRATIONS
    ]
    store.close()


def test_newer_major_schema_is_refused_and_left_alone(tmp_path) -> None:
    Store.open(tmp_path / "d", T0).close()
    path = tmp_path / "d" / STORE_FILE
    conn = apsw.Connection(str(path))
    conn.execute(f"PRAGMA user_version = {2 << 16 | 3}")
    conn.close()
    before = path.read_bytes()
    with pytest.raises(
        SchemaTooNewError, match=r"newer Coven \(schema 2.3; this version knows 1\.\d+\)"
    ):
        Store.open(tmp_path / "d", T0)
    assert path.read_bytes() == before


def test_another_apps_database_is_refused_unchanged(tmp_path) -> None:
    directory = tmp_path / "d"
    directory.mkdir(mode=0o700)
    path = directory / STORE_FILE
    other = apsw.Connection(str(path))
    other.execute("CREATE TABLE notes (body TEXT); INSERT INTO notes VALUES ('mine')")
    other.close()
    path.chmod(0o600)
    before = path.read_bytes()
    with pytest.raises(ForeignFileError, match="another application's SQLite database"):
        Store.open(directory, T0)
    assert path.read_bytes() == before


def test_random_bytes_are_refused_unchanged(tmp_path) -> None:
    directory = tmp_path / "d"
    directory.mkdir(mode=0o700)
    path = directory / STORE_FILE
    path.write_bytes(b"\x00\x01garbage" * 100)
    path.chmod(0o600)
    with pytest.raises(ForeignFileError, match="not a Coven store"):
        Store.open(directory, T0)
    assert path.read_bytes() == b"\x00\x01garbage" * 100


def test_an_empty_file_is_refused_as_damaged_not_written_over(tmp_path) -> None:
    directory = tmp_path / "d"
    directory.mkdir(mode=0o700)
    path = directory / STORE_FILE
    path.touch(mode=0o600)
    with pytest.raises(ForeignFileError, match=r"is empty: .* move it away: mv "):
        Store.open(directory, T0)
    assert path.read_bytes() == b"" and sorted(directory.iterdir()) == [path]


def test_a_lowered_schema_version_is_a_damaged_store_not_our_bug(tmp_path) -> None:
    Store.open(tmp_path / "d", T0).close()
    path = tmp_path / "d" / STORE_FILE
    conn = apsw.Connection(str(path))
    conn.execute("PRAGMA user_version = 0")
    conn.close()
    before = path.read_bytes()
    with pytest.raises(ForeignFileError, match=r"damaged or not Coven's: its schema version 0\.0"):
        Store.open(tmp_path / "d", T0)
    assert path.read_bytes() == before


def test_without_create_a_missing_store_is_said_and_nothing_made(tmp_path) -> None:
    with pytest.raises(NoStoreError, match=r"no Coven store in .*/d yet: add a routine"):
        Store.open(tmp_path / "d", T0, create=False)
    assert list(tmp_path.iterdir()) == []
    Store.open(tmp_path / "d", T0).close()
    Store.open(tmp_path / "d", T0, create=False).close()
