"""CHECK lists as comparisons (issue #9): the same constraints, no b-tree per write."""

from __future__ import annotations

import apsw
import pytest

from coven_core.store import constraints
from coven_core.store import store as store_module
from coven_core.store.errors import StoreBug
from coven_core.store.schema import MIGRATIONS
from coven_core.store.store import Store
from tests.core.conftest import T0

# the store as 0006_timeline left it (later migrations come after the one tested here)
BEFORE = MIGRATIONS[: [m.name for m in MIGRATIONS].index("0007_write_costs")]
# ... and as this migration leaves it (a later one may add columns to the same tables)
THROUGH = MIGRATIONS[: len(BEFORE) + 1]


def test_an_in_list_becomes_comparisons_and_the_rest_is_kept() -> None:
    sql = "CREATE TABLE t (s TEXT CHECK (s IN ('a', 'b', 'c')), n INTEGER CHECK (n = 1)) STRICT"
    assert constraints.as_comparisons(sql) == (
        "CREATE TABLE t (s TEXT CHECK (s = 'a' OR s = 'b' OR s = 'c'), n INTEGER CHECK (n = 1)) "
        "STRICT"
    )


def test_a_list_of_anything_but_text_literals_is_refused() -> None:
    with pytest.raises(StoreBug, match="not plain text literals"):
        constraints.as_comparisons("CREATE TABLE t (n INTEGER CHECK (n IN (1, 2, 3)))")


def _old_store(tmp_path, monkeypatch) -> Store:  # type: ignore[no-untyped-def]
    """A store at the schema before this migration, with an occurrence in it."""
    with monkeypatch.context() as patch:
        patch.setattr(store_module, "MIGRATIONS", BEFORE)
        store = Store.open(tmp_path / "d", T0)
    store.conn.execute(
        "INSERT INTO routines (id, name, state, state_changed_at, revision, planned_through, "
        "created_at) VALUES ('r', 'nightly', 'active', ?1, 1, ?1, ?1)",
        (T0.isoformat(),),
    )
    store.conn.execute(
        "INSERT INTO occurrences (id, routine_id, revision, kind, scheduled_utc, zone, "
        "tzdb_version, state, planned_at, generation) "
        "VALUES ('r@1', 'r', 1, 'scheduled', ?1, 'UTC', '2026a', 'planned', ?1, 1)",
        (T0.isoformat(),),
    )
    return store


def _definitions(conn: apsw.Connection) -> dict[str, str]:
    return dict(conn.execute("SELECT name, sql FROM sqlite_schema WHERE sql IS NOT NULL"))


def test_an_older_store_is_rewritten_in_place_and_keeps_its_rows(tmp_path, monkeypatch) -> None:
    old = _old_store(tmp_path, monkeypatch)
    before = _definitions(old.conn)
    old.close()
    monkeypatch.setattr(store_module, "MIGRATIONS", THROUGH)
    store = Store.open(tmp_path / "d", T0)
    conn = store.conn
    after = _definitions(conn)
    assert "state IN" in before["occurrences"] and "IN (" not in after["occurrences"]
    assert after["occurrences"] == constraints.as_comparisons(before["occurrences"])
    assert conn.execute("SELECT id, state FROM occurrences").fetchall() == [("r@1", "planned")]
    assert conn.execute("PRAGMA integrity_check").fetchall() == [("ok",)]
    with pytest.raises(apsw.ConstraintError, match="CHECK"):
        conn.execute("UPDATE occurrences SET state = 'lost' WHERE id = 'r@1'")
    store.close()


def test_a_definition_that_does_not_parse_refuses_the_migration_unchanged(
    tmp_path, monkeypatch
) -> None:
    old = _old_store(tmp_path, monkeypatch)
    before = _definitions(old.conn)
    old.close()
    monkeypatch.setattr(constraints, "as_comparisons", lambda sql: sql.replace("CHECK", "CHEK"))
    with pytest.raises(StoreBug, match="does not parse"):
        Store.open(tmp_path / "d", T0)
    monkeypatch.undo()
    conn = apsw.Connection(str(tmp_path / "d" / store_module.STORE_FILE))
    assert _definitions(conn) == before
    assert conn.execute("PRAGMA user_version").fetchone()[0] == BEFORE[-1].user_version


WRITES = (
    "INSERT INTO occurrences (id, routine_id, revision, kind, scheduled_utc, zone, tzdb_version, "
    "state, planned_at, generation) VALUES (?, ?, 1, ?, ?, 'UTC', '2026a', ?, ?, 1)",
    "UPDATE occurrences SET state = ?, disposition = ? WHERE id = ?",
    "UPDATE attempts SET state = ? WHERE id = ?",
    "UPDATE deliveries SET state = ? WHERE occurrence_id = ?",
    "UPDATE routines SET state = ? WHERE id = ?",
)


@pytest.mark.parametrize("sql", WRITES)
def test_writing_a_checked_column_builds_no_ephemeral_table(tmp_path, sql: str) -> None:
    store = Store.open(tmp_path / "d", T0)
    program = [row[1] for row in store.conn.execute("EXPLAIN " + sql, (None,) * sql.count("?"))]
    assert "OpenEphemeral" not in program
    store.close()


def test_the_claim_step_reads_waiting_occurrences_without_a_sort(tmp_path) -> None:
    from coven_core.scheduling import occurrences

    store = Store.open(tmp_path / "d", T0)
    plan = " ".join(
        str(row[3]) for row in store.conn.execute("EXPLAIN QUERY PLAN " + occurrences._WAITING,
                                                  ("2026", 10, "", ""))
    )  # fmt: skip
    assert "occurrences_due" in plan and "TEMP B-TREE" not in plan, plan
    store.close()
