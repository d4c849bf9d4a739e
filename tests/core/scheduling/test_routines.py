"""Routines' stored revisions: a row is decoded once while it stays as it was, and anew once
it changes (a damage, a repair), so what is read is always what is stored."""

from __future__ import annotations

import pytest

from coven_core.scheduling import routines
from tests.core.conftest import Engine


def test_an_unchanged_row_is_decoded_once(engine: Engine) -> None:
    rid = engine.add("hourly", "0 * * * *")
    conn = engine.store.conn
    first, again = routines.revisions(conn, rid), routines.revisions(conn, rid)
    assert first[0] is again[0]


def test_a_row_damaged_since_it_was_decoded_is_broken(engine: Engine) -> None:
    rid = engine.add("hourly", "0 * * * *")
    conn = engine.store.conn
    routines.revisions(conn, rid)
    conn.execute("UPDATE revisions SET argv = 'not json' WHERE routine_id = ?", (rid,))
    with pytest.raises(routines.BrokenRevision, match="damaged"):
        routines.revisions(conn, rid)


def test_a_row_changed_since_it_was_decoded_is_read_as_stored(engine: Engine) -> None:
    rid = engine.add("hourly", "0 * * * *")
    conn = engine.store.conn
    routines.revisions(conn, rid)
    conn.execute("UPDATE revisions SET schedule = '30 * * * *' WHERE routine_id = ?", (rid,))
    assert [r.spec.schedule for r in routines.revisions(conn, rid)] == ["30 * * * *"]
