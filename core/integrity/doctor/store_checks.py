"""Checks of the store file itself: SQLite's integrity, the schema, the data directory."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import apsw

from coven_core.integrity.doctor.base import (
    ERROR,
    INFO,
    STORE_ENDS,
    WARNING,
    Context,
    Finding,
    Said,
    finding,
    one_line,
    said,
)
from coven_core.integrity.privacy import loose_entries
from coven_core.notation.i18n import N_
from coven_core.store.errors import StoreLocationError
from coven_core.store.location import check_store_file, filesystem_type, prepare_data_dir
from coven_core.store.query import scalar
from coven_core.store.schema import APPLICATION_ID, CURRENT, MIGRATIONS

# --- integrity and schema -----------------------------------------------------------------


def check_integrity(context: Context) -> Iterator[Finding]:
    pragma = "quick_check" if context.quick else "integrity_check"
    lines = [str(row[0]) for row in context.conn.execute(f"PRAGMA {pragma}")]
    damaged = _damaged_fix(context.store.path)
    if lines != ["ok"]:
        for line in lines:
            fix = _EDITED if _breaks_a_rule(line) else damaged
            yield finding(ERROR, said(N_("SQLite {pragma}: {line} — {fix}"), pragma=pragma,
                                      line=one_line(line), fix=fix))  # fmt: skip
    for table, rowid, parent, _ in context.conn.execute("PRAGMA foreign_key_check"):
        yield finding(
            ERROR, said(N_("row {rowid} of {table} refers to a {parent} row that does not exist "
                           "— {fix}"), rowid=rowid, table=table, parent=parent, fix=_EDITED),
            table=table, rowid=rowid, parent=parent,
        )  # fmt: skip


_EDITED = Said(N_("a row breaks the schema's rules: the store was changed outside Coven"))


def _damaged_fix(path: Path) -> Said:
    return said(N_("the store file is damaged: stop Coven, keep a copy of {path}, then restore a "
                   "backup or rebuild it with `sqlite3 {path} .recover`"), path=path)  # fmt: skip


def _breaks_a_rule(line: str) -> bool:
    """A row that breaks a CHECK or NOT NULL rule: the file is sound, its contents are not."""
    return "constraint failed" in line or line.startswith("NULL value in")


def check_schema(context: Context) -> Iterator[Finding]:
    conn = context.conn
    found_id = int(scalar(conn, "PRAGMA application_id"))
    if found_id != APPLICATION_ID:
        yield finding(
            ERROR,
            said(
                N_(
                    "application_id is {found:#x}, not Coven's {ours:#x}: this file may belong to "
                    "another application; move it away and restore Coven's store"
                ),
                found=found_id,
                ours=APPLICATION_ID,
            ),
        )
    version = int(scalar(conn, "PRAGMA user_version"))
    yield from _version(version)
    yield from _missing_migrations(conn, version)


def _version(version: int) -> Iterator[Finding]:
    major, minor = version >> 16, version & 0xFFFF
    known = f"{CURRENT.major}.{CURRENT.minor}"
    if major != CURRENT.major or minor < CURRENT.minor:
        yield finding(
            ERROR, said(N_("schema version {found} is not this Coven's {known}: the store was not "
                           "migrated (or was downgraded); open it with this version's `coven "
                           "status` to migrate"), found=f"{major}.{minor}", known=known),
            found=f"{major}.{minor}", expected=known,
        )  # fmt: skip
    elif minor > CURRENT.minor:
        yield finding(
            WARNING, said(N_("schema version {found} is newer than this Coven's {known}: a newer "
                             "Coven wrote it; these checks may not know its newest columns. "
                             "Upgrade Coven."), found=f"{major}.{minor}", known=known),
            found=f"{major}.{minor}", expected=known,
        )  # fmt: skip


def _missing_migrations(conn: apsw.Connection, version: int) -> Iterator[Finding]:
    recorded = {str(row[0]) for row in conn.execute("SELECT name FROM migrations")}
    for migration in MIGRATIONS:
        if migration.user_version <= version and migration.name not in recorded:
            yield finding(
                WARNING, said(N_("migration {name} is not recorded in the migrations table"),
                              name=migration.name),
                migration=migration.name,
            )  # fmt: skip


# --- location -----------------------------------------------------------------------------


def check_location(context: Context) -> Iterator[Finding]:
    store = context.store
    for refuse in (lambda: prepare_data_dir(store.data_dir), lambda: check_store_file(store.path)):
        try:
            refuse()
        except StoreLocationError as error:
            yield finding(ERROR, one_line(str(error)))
    yield from _loose_entries(store.data_dir, store.path)
    fstype = filesystem_type(store.data_dir)
    where = (said(N_("filesystem type {fstype}"), fstype=fstype) if fstype
             else said(N_("filesystem type unknown")))  # fmt: skip
    yield finding(INFO, said(N_("the store is in {folder}, {where}"), folder=store.data_dir,
                             where=where), fstype=fstype)  # fmt: skip


def _loose_entries(data_dir: Path, store_path: Path) -> Iterator[Finding]:
    """Specs, outputs and logs may hold secrets: everything in the data directory is as
    private as the store (which the refusals above already judged)."""
    store_files = {store_path.with_name(store_path.name + end) for end in STORE_ENDS}
    for entry in loose_entries(data_dir):
        if entry.path not in store_files and entry.path != data_dir:
            text = (N_("{path} has permissions {mode:04o}; every folder in the data directory is "
                       "private to you. Run: {fix}") if entry.is_dir
                    else N_("{path} has permissions {mode:04o}; every file in the data directory "
                            "is private to you. Run: {fix}"))  # fmt: skip
            yield finding(WARNING, said(text, path=entry.path, mode=entry.mode, fix=entry.fix),
                          path=str(entry.path))  # fmt: skip
