"""Small typed helpers for the queries that must return exactly one row."""

from __future__ import annotations

from typing import Any

import apsw

from coven_core.store.errors import StoreBug


def one(
    conn: apsw.Connection, sql: str, params: tuple[Any, ...] | dict[str, Any] = ()
) -> tuple[Any, ...]:
    row = conn.execute(sql, params).fetchone()
    if row is None:
        raise StoreBug(f"expected one row from: {sql}")
    return tuple(row)


def scalar(conn: apsw.Connection, sql: str, params: tuple[Any, ...] | dict[str, Any] = ()) -> Any:
    return one(conn, sql, params)[0]
