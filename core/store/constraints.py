"""CHECK constraints written as comparisons, not IN lists (issue #9).

SQLite compiles ``CHECK (state IN ('planned', 'claimed', 'running', 'settled'))`` — an IN
list of more than two constants — into an ephemeral b-tree that each statement writing the
column builds, fills and frees again (``OpenEphemeral`` in its ``EXPLAIN``): an in-memory
database of its own, a zeroed 4 KiB page and all. Every claim, start and settlement pays it;
it was 8% of the instructions of the engine's bookkeeping per occurrence. The same check as
``state = 'planned' OR state = 'claimed' OR …`` is a few comparisons.

A CHECK constraint is only text in ``sqlite_schema``: rewriting it as an equivalent one
changes nothing on disk, so the store's existing tables are edited in place, by the procedure
SQLite documents for changes "that do not affect the on-disk content in any way"
(https://sqlite.org/lang_altertable.html#otheralter): in the migration's transaction, with
``writable_schema`` on only for the UPDATE, the schema version bumped so that every
connection re-reads the schema. Each new definition is first parsed in a scratch database, so
a mistake here refuses the migration instead of leaving a store SQLite cannot read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

import apsw

from coven_core.store.errors import StoreBug
from coven_core.store.query import scalar

_CHECK_IN = re.compile(r"CHECK \((\w+) IN \(([^()]*)\)\)")
_LITERAL = re.compile(r"'[^']*'")


def as_comparisons(table_sql: str) -> str:
    """``table_sql`` with each ``CHECK (column IN ('a', 'b', …))`` as ``column = 'a' OR …``.

    Only lists of plain string literals are rewritten; anything else in one is a bug here."""

    def rewrite(match: re.Match[str]) -> str:
        column, values = match.group(1), match.group(2)
        literals = _LITERAL.findall(values)
        if ", ".join(literals) != values.strip():
            raise StoreBug(f"a CHECK list that is not plain text literals: {match.group(0)}")
        return "CHECK (" + " OR ".join(f"{column} = {literal}" for literal in literals) + ")"

    return _CHECK_IN.sub(rewrite, table_sql)


def rewrite_checks(conn: apsw.Connection) -> None:
    """Rewrite every table's CHECK lists, inside the caller's write transaction."""
    edits = {
        name: as_comparisons(sql)
        for name, sql in conn.execute("SELECT name, sql FROM sqlite_schema WHERE type = 'table'")
        if sql is not None and _CHECK_IN.search(sql)
    }
    if not edits:
        return
    _must_parse(edits.values())
    _write_definitions(conn, edits)
    for name in edits:  # the new definitions are the ones in force from here on
        conn.execute(f'SELECT * FROM "{name}" LIMIT 0')


def _must_parse(definitions: Iterable[str]) -> None:
    """Each table definition is valid SQL (created in one scratch database)."""
    scratch = apsw.Connection(":memory:")
    try:
        for table_sql in definitions:
            try:
                scratch.execute(table_sql)
            except apsw.SQLError as exc:
                raise StoreBug(
                    f"a rewritten table definition does not parse ({exc}): {table_sql}"
                ) from exc
    finally:
        scratch.close()


def _write_definitions(conn: apsw.Connection, edits: dict[str, str]) -> None:
    version = int(scalar(conn, "PRAGMA schema_version"))
    defensive = conn.config(apsw.SQLITE_DBCONFIG_DEFENSIVE, -1)
    conn.config(apsw.SQLITE_DBCONFIG_DEFENSIVE, 0)  # defensive mode forbids writable_schema
    conn.execute("PRAGMA writable_schema = ON")
    try:
        for name, sql in edits.items():
            conn.execute(
                "UPDATE sqlite_schema SET sql = ? WHERE type = 'table' AND name = ?", (sql, name)
            )
        conn.execute(f"PRAGMA schema_version = {version + 1}")
    finally:
        conn.execute("PRAGMA writable_schema = OFF")
        conn.config(apsw.SQLITE_DBCONFIG_DEFENSIVE, defensive)


def widen_check(conn: apsw.Connection, table: str, column: str, value: str) -> None:
    """Allow one more text ``value`` in ``table``'s comparison CHECK on ``column`` (as
    :func:`rewrite_checks` left it), inside the caller's write transaction: a wider CHECK
    changes nothing on disk, so the definition is edited in place the same way."""
    sql = str(scalar(conn, "SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = ?",
                     (table,)))  # fmt: skip
    last = re.findall(rf"{column} = '[^']*'\)", sql)
    if len(last) != 1:
        raise StoreBug(f"no single CHECK on {table}.{column} to widen: {sql}")
    widened = sql.replace(last[0], f"{last[0][:-1]} OR {column} = '{value}')")
    _must_parse([widened])
    _write_definitions(conn, {table: widened})
    conn.execute(f'SELECT * FROM "{table}" LIMIT 0')
