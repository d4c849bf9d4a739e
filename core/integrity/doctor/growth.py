"""How big the store and its folders have grown (info findings)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import apsw

from coven_core.integrity.doctor.base import (
    ERROR,
    INFO,
    Finding,
    Said,
    counted,
    finding,
    one_line,
    said,
)
from coven_core.integrity.retention import (
    FolderGrowth,
    Growth,
    TableGrowth,
    growth,
)
from coven_core.notation.i18n import N_
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
        yield finding(ERROR, said(N_("the store's growth cannot be measured: {error}"),
                                  error=one_line(str(usage))))  # fmt: skip
        return
    yield finding(
        INFO, said(N_("store file {store} ({free} free for reuse), write-ahead log {wal}"),
                   store=_size(usage["file_bytes"]), free=_size(usage["free_bytes"]),
                   wal=_size(usage["wal_bytes"])),
        file_bytes=usage["file_bytes"], wal_bytes=usage["wal_bytes"],
    )  # fmt: skip
    yield finding(INFO, said(N_("largest tables: {tables}"), tables=_largest_tables(usage)))
    yield _folder_finding(said(N_("attempt directories")), usage["attempts"])
    yield _folder_finding(said(N_("delivered output")), usage["output"])


def _size(size: int) -> Callable[[str], str]:
    """A size written the way the shown language writes it."""
    return lambda locale: size_text(size, locale)


def _folder_finding(label: Said, folder: FolderGrowth) -> Finding:
    files = counted("{what}: {count} file, {size} in {path}",
                    "{what}: {count} files, {size} in {path}", folder["files"],
                    what=label, size=_size(folder["bytes"]), path=folder["path"])  # fmt: skip
    return finding(INFO, files, files=folder["files"], bytes=folder["bytes"])


def _largest_tables(usage: Growth, shown: int = 3) -> Said:
    tables = usage["tables"]
    ranked = sorted(tables, key=lambda name: (tables[name]["bytes"] or 0, tables[name]["rows"]),
                    reverse=True)  # fmt: skip
    if not ranked:
        return said(N_("none"))
    parts = {
        f"t{index}": _table_text(name, tables[name]) for index, name in enumerate(ranked[:shown])
    }
    return Said("; ".join(f"{{{key}}}" for key in parts), parts)


def _table_text(name: str, table: TableGrowth) -> Said:
    rows = counted("{table} {count} row", "{table} {count} rows", table["rows"], table=name)
    size = table["bytes"]
    if size is None:
        return rows
    return said(N_("{rows}, {size}"), rows=rows, size=_size(size))
