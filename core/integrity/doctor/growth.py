"""How big the store and its folders have grown (info findings)."""

from __future__ import annotations

from collections.abc import Iterator

import apsw

from coven_core.integrity.doctor.base import ERROR, INFO, Finding, finding, one_line
from coven_core.integrity.retention import (
    FolderGrowth,
    Growth,
    TableGrowth,
    growth,
)
from coven_core.notation.sizes import size_text
from coven_core.store.errors import StoreError
from coven_core.store.store import Store

# --- growth -------------------------------------------------------------------------------


def measured(store: Store) -> Growth | Exception:
    try:
        return growth(store)
    except (apsw.Error, StoreError) as error:
        return error


def growth_findings(usage: Growth | Exception) -> Iterator[Finding]:
    if isinstance(usage, Exception):
        yield finding(ERROR, f"the store's growth cannot be measured: {one_line(str(usage))}")
        return
    store, free = size_text(usage["file_bytes"]), size_text(usage["free_bytes"])
    yield finding(
        INFO, f"store file {store} ({free} free for reuse), "
        f"write-ahead log {size_text(usage['wal_bytes'])}",
        file_bytes=usage["file_bytes"], wal_bytes=usage["wal_bytes"],
    )  # fmt: skip
    yield finding(INFO, f"largest tables: {_largest_tables(usage)}")
    yield _folder_finding("attempt directories", usage["attempts"])
    yield _folder_finding("delivered output", usage["output"])


def _folder_finding(label: str, folder: FolderGrowth) -> Finding:
    return finding(INFO, f"{label}: {folder['files']} file(s), {size_text(folder['bytes'])} in "
                    f"{folder['path']}", files=folder["files"], bytes=folder["bytes"])  # fmt: skip


def _largest_tables(usage: Growth, shown: int = 3) -> str:
    tables = usage["tables"]
    ranked = sorted(tables, key=lambda name: (tables[name]["bytes"] or 0, tables[name]["rows"]),
                    reverse=True)  # fmt: skip
    return "; ".join(_table_text(name, tables[name]) for name in ranked[:shown]) or "none"


def _table_text(name: str, table: TableGrowth) -> str:
    size = table["bytes"]
    return f"{name} {table['rows']} rows" + ("" if size is None else f", {size_text(size)}")
