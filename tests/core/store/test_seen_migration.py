"""Migration 0009_seen: failures from before it count as seen, so an upgrade does not light the
tray up for years of history (issue #21)."""

from __future__ import annotations

from coven_core.store import store as store_module
from coven_core.store.schema import MIGRATIONS
from coven_core.store.store import Store
from tests.core.conftest import T0

BEFORE = MIGRATIONS[: [m.name for m in MIGRATIONS].index("0009_seen")]


def test_failures_stored_before_the_migration_count_as_seen(tmp_path, monkeypatch) -> None:
    with monkeypatch.context() as patch:
        patch.setattr(store_module, "MIGRATIONS", BEFORE)
        old = Store.open(tmp_path / "d", T0)
    old.conn.execute(
        "INSERT INTO routines (id, name, state, state_changed_at, revision, planned_through, "
        "created_at) VALUES ('r', 'nightly', 'active', ?1, 1, ?1, ?1)",
        (T0.isoformat(),),
    )
    old.conn.execute(
        "INSERT INTO occurrences (id, routine_id, revision, kind, scheduled_utc, zone, "
        "tzdb_version, state, disposition, planned_at, settled_at, generation) "
        "VALUES ('r@1', 'r', 1, 'scheduled', ?1, 'UTC', '2026a', 'settled', 'failed', ?1, ?1, 1)",
        (T0.isoformat(),),
    )
    old.close()
    store = Store.open(tmp_path / "d", T0)
    assert store.conn.execute("SELECT seen_at FROM occurrences").fetchall() == [(T0.isoformat(),)]
    store.close()
