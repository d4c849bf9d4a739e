"""The scheduler's delivery queries use the index on undelivered receipts (not a scan)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import apsw

from coven_core.scheduling import receipts
from coven_core.store.store import Store
from coven_core.views import overview

NOW = datetime(2026, 3, 1, tzinfo=UTC)


def plans_of(conn: apsw.Connection, call) -> list[str]:  # type: ignore[no-untyped-def]
    """The query plan of every statement ``call`` runs that reads the deliveries table."""
    statements: list[tuple[str, object]] = []

    def trace(cursor: apsw.Cursor, sql: str, bindings: object) -> bool:
        if "deliveries" in sql and not sql.startswith("EXPLAIN"):
            statements.append((sql, bindings))
        return True

    conn.exec_trace = trace
    try:
        call()
    finally:
        conn.exec_trace = None
    assert statements
    return [
        " ".join(str(row[3]) for row in conn.execute("EXPLAIN QUERY PLAN " + sql, params))
        for sql, params in statements
    ]


def test_each_pass_finds_pending_deliveries_by_the_index(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "data", NOW)
    conn = store.conn
    for plan in (
        *plans_of(conn, lambda: receipts.due(conn, store.data_dir, NOW, 8)),
        *plans_of(conn, lambda: receipts.earliest(conn, NOW)),
    ):
        assert "USING INDEX deliveries_pending" in plan, plan
    store.close()


def test_the_attention_count_finds_failed_deliveries_by_the_index(tmp_path: Path) -> None:
    store = Store.open(tmp_path / "data", NOW)
    conn = store.conn
    (plan,) = plans_of(conn, lambda: overview._attention(conn, NOW))
    assert "SEARCH deliveries USING" in plan and "deliveries_pending" in plan, plan
    store.close()
