"""``RevisionCache``: a routine's revisions are read once and re-read only after an edit."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

import apsw

from coven_core.scheduling import routines
from coven_core.scheduling.revision_cache import RevisionCache
from tests.core.conftest import Engine
from tests.core.tracing import statements_run


def revision_reads(conn: apsw.Connection, action: Callable[[], object]) -> int:
    return sum("FROM revisions" in sql for sql in statements_run(conn, action))


def test_unchanged_revisions_are_read_once(engine: Engine) -> None:
    rid = engine.add("hourly", "0 * * * *")
    conn, cache = engine.store.conn, RevisionCache()
    routine = routines.by_id(conn, rid)
    assert revision_reads(conn, lambda: cache.of(conn, routine)) == 1
    assert revision_reads(conn, lambda: cache.numbered(conn, routine, 1)) == 0
    assert [r.number for r in cache.of(conn, routine)] == [1]


def test_an_edit_is_seen_through_the_routine_row(engine: Engine) -> None:
    rid = engine.add("hourly", "0 * * * *")
    conn, cache = engine.store.conn, RevisionCache()
    cache.of(conn, routines.by_id(conn, rid))
    engine.operator.edit_routine("hourly", lambda spec: replace(spec, schedule="30 * * * *"))
    edited = routines.by_id(conn, rid)
    assert [r.number for r in cache.of(conn, edited)] == [1, 2]
    assert cache.numbered(conn, edited, 2).spec.schedule == "30 * * * *"
    assert cache.numbered(conn, edited, 1).spec.schedule == "0 * * * *"


def test_the_cache_is_bounded(engine: Engine) -> None:
    conn, cache = engine.store.conn, RevisionCache(limit=2)
    ids = [engine.add(f"r{n}", "0 * * * *") for n in range(3)]
    for rid in ids:
        cache.of(conn, routines.by_id(conn, rid))
    assert len(cache._by_routine) <= 2
