"""The SQL a piece of engine code runs, for tests that count or inspect statements."""

from __future__ import annotations

from collections.abc import Callable

import apsw


def statements_run(conn: apsw.Connection, action: Callable[[], object]) -> list[str]:
    """Every statement ``action`` executes on ``conn``, in order (apsw's exec trace)."""
    statements: list[str] = []

    def trace(cursor: apsw.Cursor, sql: str, bindings: object) -> bool:
        statements.append(sql)
        return True

    conn.exec_trace = trace
    try:
        action()
    finally:
        conn.exec_trace = None
    return statements
