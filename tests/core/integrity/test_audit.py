"""The audit log: appends chain by hash, any edit is found, pruning keeps the chain valid."""

from __future__ import annotations

import hashlib
import json
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from coven_core.integrity import audit
from coven_core.integrity.audit import GENESIS, AuditKind, AuditLogBroken, ChainReport
from coven_core.store.errors import StoreBug
from coven_core.store.store import Store
from tests.core.conftest import T0

COLUMNS = ("seq", "at", "who", "action", "target", "why", "result", "details", "prev_hash")
COLUMNS += ("hash", "kind")


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = Store.open(tmp_path / "d", T0)
    yield opened
    opened.close()


def _append(store: Store, count: int, *, target: str = "backup") -> None:
    with store.write() as conn:
        first = audit.entries(conn, limit=1)
        start = first[0].seq if first else 0
        for n in range(start + 1, start + count + 1):
            audit.append(
                conn,
                at=T0 + timedelta(minutes=n),
                who="ada",
                action="pause",
                target=target,
                why=f"reason {n}",
                result="ok",
                details={"n": n, "note": "café"},
            )


def _verify(store: Store) -> ChainReport:
    with store.read() as conn:
        return audit.verify(conn)


def _prune(store: Store, keep: int) -> int:
    with store.write() as conn:
        return audit.prune(conn, keep=keep)


def _tamper(store: Store, sql: str, params: tuple[Any, ...] = ()) -> None:
    with store.write() as conn:
        conn.execute(sql, params)


def _row(store: Store, seq: int) -> dict[str, Any]:
    found = store.conn.execute(
        f"SELECT {', '.join(COLUMNS)} FROM audit_log WHERE seq = ?", (seq,)
    ).fetchone()
    return dict(zip(COLUMNS, found, strict=True))


def _spec_hash(row: dict[str, Any]) -> str:
    """The hash as the brief defines it, computed independently of the module."""
    payload = {k: v for k, v in row.items() if k != "hash"}
    payload["details"] = json.loads(row["details"])
    text = json.dumps(payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


def _rehash(store: Store, seq: int) -> None:
    """What a careful forger does after an edit: make the row's own hash match again."""
    _tamper(
        store, "UPDATE audit_log SET hash = ? WHERE seq = ?", (_spec_hash(_row(store, seq)), seq)
    )


# Appending


def test_entries_are_chained_from_the_genesis_hash(store: Store) -> None:
    _append(store, 3)
    rows = [_row(store, seq) for seq in (1, 2, 3)]
    assert rows[0]["prev_hash"] == GENESIS == "0" * 64
    assert [r["prev_hash"] for r in rows[1:]] == [r["hash"] for r in rows[:2]]
    assert all(r["hash"] == _spec_hash(r) for r in rows)


def test_append_returns_what_it_stored(store: Store) -> None:
    with store.write() as conn:
        entry = audit.append(
            conn, at=T0, who="ada", action="reconcile", target="run-1", why=None, result="ok"
        )
    assert (entry.seq, entry.at, entry.who, entry.action) == (1, T0, "ada", "reconcile")
    assert (entry.target, entry.why, entry.details, entry.kind) == ("run-1", None, {}, "entry")
    assert entry.hash == _row(store, 1)["hash"]


def test_append_outside_a_transaction_is_refused(store: Store) -> None:
    with pytest.raises(StoreBug, match="inside the caller's write transaction"):
        audit.append(store.conn, at=T0, who="a", action="b", target=None, why=None, result="ok")


def test_details_that_are_not_json_numbers_are_refused(store: Store) -> None:
    with pytest.raises(ValueError), store.write() as conn:
        audit.append(
            conn, at=T0, who="a", action="b", target=None, why=None, result="ok",
            details={"x": float("nan")},
        )  # fmt: skip
    assert audit.verify(store.conn) == ChainReport(True, 0, None, None)


def test_an_aborted_transaction_leaves_no_entry(store: Store) -> None:
    with pytest.raises(RuntimeError), store.write() as conn:
        audit.append(conn, at=T0, who="a", action="b", target=None, why=None, result="ok")
        raise RuntimeError("the action failed")
    _append(store, 1)
    assert _verify(store) == ChainReport(True, 1, None, None)


# Verifying


def test_an_empty_log_verifies(store: Store) -> None:
    assert _verify(store) == ChainReport(True, 0, None, None)


def test_an_untouched_log_verifies(store: Store) -> None:
    _append(store, 5)
    assert _verify(store) == ChainReport(True, 5, None, None)


def test_an_edited_reason_is_reported_at_that_entry(store: Store) -> None:
    _append(store, 5)
    _tamper(store, "UPDATE audit_log SET why = 'nothing to see' WHERE seq = 3")
    assert _verify(store) == ChainReport(
        False, 2, 3, "entry 3 was changed: its hash does not match its contents"
    )


def test_reformatted_details_are_an_edit(store: Store) -> None:
    _append(store, 2)
    _tamper(store, """UPDATE audit_log SET details = '{"n": 2, "note": "café"}' WHERE seq = 2""")
    assert _verify(store).first_broken_seq == 2


@pytest.mark.parametrize(
    ("deleted", "problem"),
    [
        ((3,), "entry 3 is missing (seq jumps from 2 to 4)"),
        ((3, 4), "entries 3–4 are missing (seq jumps from 2 to 5)"),
        ((1, 2), "entries 1–2 are missing (the log starts at entry 3)"),
    ],
)
def test_deleted_entries_are_reported(store: Store, deleted: tuple[int, ...], problem: str) -> None:
    _append(store, 5)
    for seq in deleted:
        _tamper(store, "DELETE FROM audit_log WHERE seq = ?", (seq,))
    report = _verify(store)
    assert (report.ok, report.first_broken_seq, report.problem) == (False, deleted[0], problem)


def test_a_changed_prev_hash_is_reported(store: Store) -> None:
    _append(store, 5)
    _tamper(store, "UPDATE audit_log SET prev_hash = ? WHERE seq = 4", ("f" * 64,))
    assert _verify(store).first_broken_seq == 4
    _rehash(store, 4)
    assert _verify(store) == ChainReport(
        False, 3, 4, "entry 4 does not follow entry 3: prev_hash differs"
    )


def test_a_rehashed_edit_breaks_the_next_link(store: Store) -> None:
    _append(store, 5)
    _tamper(store, "UPDATE audit_log SET result = 'ok' , why = NULL WHERE seq = 2")
    _rehash(store, 2)
    report = _verify(store)
    assert (report.first_broken_seq, report.problem) == (
        3,
        "entry 3 does not follow entry 2: prev_hash differs",
    )


def test_the_first_entry_must_start_from_genesis(store: Store) -> None:
    _append(store, 2)
    _tamper(store, "UPDATE audit_log SET prev_hash = ? WHERE seq = 1", ("1" * 64,))
    _rehash(store, 1)
    report = _verify(store)
    assert report.first_broken_seq == 1
    assert report.problem == (
        "entry 1 does not start the chain: prev_hash is not the genesis hash (64 zeros)"
    )


# Pruning


def test_prune_replaces_the_oldest_entries_with_a_checkpoint(store: Store) -> None:
    _append(store, 10)
    last_pruned = _row(store, 6)

    assert _prune(store, keep=4) == 6

    assert _verify(store) == ChainReport(True, 4, None, None, pruned=6)
    checkpoint = _row(store, 6)
    assert checkpoint["kind"] == "checkpoint"
    assert checkpoint["prev_hash"] == last_pruned["hash"]
    assert json.loads(checkpoint["details"]) == {
        "pruned": 6,
        "last_hash": last_pruned["hash"],
        "from": _row_at(1),
        "through": last_pruned["at"],
    }
    assert [r[0] for r in store.conn.execute("SELECT seq FROM audit_log")] == [6, 7, 8, 9, 10]


def _row_at(minutes: int) -> str:
    return (T0 + timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def test_a_second_prune_extends_the_one_checkpoint(store: Store) -> None:
    _append(store, 10)
    _prune(store, keep=4)
    _append(store, 3)

    assert _prune(store, keep=2) == 5

    assert _verify(store) == ChainReport(True, 2, None, None, pruned=11)
    kinds = list(store.conn.execute("SELECT seq, kind FROM audit_log ORDER BY seq"))
    assert kinds == [(11, "checkpoint"), (12, "entry"), (13, "entry")]
    details = json.loads(_row(store, 11)["details"])
    assert (details["pruned"], details["from"], details["through"]) == (11, _row_at(1), _row_at(11))


def test_prune_with_room_to_spare_changes_nothing(store: Store) -> None:
    _append(store, 3)
    assert _prune(store, keep=3) == 0
    assert _prune(store, keep=50) == 0
    assert _verify(store) == ChainReport(True, 3, None, None)


def test_prune_to_nothing_then_append_keeps_the_chain(store: Store) -> None:
    _append(store, 4)
    assert _prune(store, keep=0) == 4
    assert _verify(store) == ChainReport(True, 0, None, None, pruned=4)
    _append(store, 2)
    assert _row(store, 5)["prev_hash"] == _row(store, 4)["prev_hash"]
    assert _verify(store) == ChainReport(True, 2, None, None, pruned=4)


def test_prune_refuses_a_negative_keep(store: Store) -> None:
    with pytest.raises(ValueError, match="keep must be zero or more"), store.write() as conn:
        audit.prune(conn, keep=-1)


def test_prune_never_erases_the_evidence_of_an_edit(store: Store) -> None:
    _append(store, 6)
    _tamper(store, "UPDATE audit_log SET who = 'mallory' WHERE seq = 2")
    with pytest.raises(AuditLogBroken, match=r"entry 2 was changed.*nothing was pruned"):
        _prune(store, keep=2)
    assert store.conn.execute("SELECT COUNT(*) FROM audit_log").fetchone()[0] == 6
    assert _verify(store).first_broken_seq == 2


def test_an_edited_checkpoint_is_reported(store: Store) -> None:
    _append(store, 6)
    _prune(store, keep=2)
    _tamper(
        store, """UPDATE audit_log SET details = json_set(details, '$.pruned', 3) WHERE seq = 4"""
    )
    assert _verify(store) == ChainReport(
        False, 0, 4, "entry 4 was changed: its hash does not match its contents"
    )


def test_a_rehashed_but_inconsistent_checkpoint_is_reported(store: Store) -> None:
    _append(store, 6)
    _prune(store, keep=2)
    _tamper(
        store, """UPDATE audit_log SET details = json_set(details, '$.pruned', 3) WHERE seq = 4"""
    )
    _rehash(store, 4)
    report = _verify(store)
    assert (report.first_broken_seq, report.problem) == (
        4,
        "checkpoint 4 is inconsistent: it must stand for entries 1–4 and carry the hash of entry 4",
    )


def test_a_deleted_checkpoint_is_reported(store: Store) -> None:
    _append(store, 6)
    _prune(store, keep=2)
    _tamper(store, "DELETE FROM audit_log WHERE kind = 'checkpoint'")
    report = _verify(store)
    assert (report.first_broken_seq, report.problem) == (
        1,
        "entries 1–4 are missing (the log starts at entry 5)",
    )


def test_a_checkpoint_inside_the_log_is_reported(store: Store) -> None:
    _append(store, 5)
    _tamper(store, "UPDATE audit_log SET kind = 'checkpoint' WHERE seq = 3")
    assert _verify(store).first_broken_seq == 3
    _rehash(store, 3)
    assert _verify(store).problem == "checkpoint 3 is not at the start of the log"


# Reading


def test_entries_come_newest_first_and_filter_by_target(store: Store) -> None:
    _append(store, 3, target="backup")
    _append(store, 2, target="sync")
    with store.read() as conn:
        assert [e.seq for e in audit.entries(conn)] == [5, 4, 3, 2, 1]
        assert [e.seq for e in audit.entries(conn, limit=2)] == [5, 4]
        assert [e.seq for e in audit.entries(conn, target="backup")] == [3, 2, 1]
        assert audit.entries(conn, limit=0) == []
    newest = audit.entries(store.conn, limit=1)[0]
    assert (newest.at, newest.details, newest.why) == (
        T0 + timedelta(minutes=5),
        {"n": 5, "note": "café"},
        "reason 5",
    )


def test_entries_end_with_the_checkpoint_but_not_for_a_target(store: Store) -> None:
    _append(store, 5)
    _prune(store, keep=2)
    listed = audit.entries(store.conn)
    assert [(e.seq, e.kind) for e in listed] == [
        (5, AuditKind.ENTRY),
        (4, AuditKind.ENTRY),
        (3, AuditKind.CHECKPOINT),
    ]
    assert listed[-1].details["pruned"] == 3
    assert [e.seq for e in audit.entries(store.conn, target="backup")] == [5, 4]


def test_an_unreadable_entry_is_a_clear_error(store: Store) -> None:
    _append(store, 1)
    _tamper(store, "UPDATE audit_log SET at = 'yesterday' WHERE seq = 1")
    with pytest.raises(AuditLogBroken, match="audit entry 1 cannot be read"):
        audit.entries(store.conn)


# Who


def test_who_am_i_is_the_os_user(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(audit.getpass, "getuser", lambda: "ada")
    assert audit.who_am_i() == "ada"


def test_who_am_i_falls_back_to_the_uid(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_user() -> str:
        raise OSError("No username set in the environment")

    monkeypatch.setattr(audit.getpass, "getuser", no_user)
    assert audit.who_am_i().startswith(("uid ", "unknown"))


# Any history verifies; any single edit is found


TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=12)
JSON_VALUES = (
    st.none()
    | st.booleans()
    | st.integers()
    | TEXT
    | st.floats(allow_nan=False, allow_infinity=False)
)


@dataclass(frozen=True)
class Append:
    who: str
    action: str
    target: str | None
    why: str | None
    result: str
    details: dict[str, Any]


@dataclass(frozen=True)
class Prune:
    keep: int


APPENDS = st.builds(
    Append, TEXT, TEXT, st.none() | TEXT, st.none() | TEXT, TEXT,
    st.dictionaries(TEXT, JSON_VALUES, max_size=3),
)  # fmt: skip
OPERATIONS = st.lists(APPENDS | st.builds(Prune, st.integers(0, 4)), min_size=1, max_size=20)


def _run(store: Store, operation: Append | Prune, minute: int) -> None:
    with store.write() as conn:
        if isinstance(operation, Prune):
            audit.prune(conn, keep=operation.keep)
            return
        audit.append(conn, at=T0 + timedelta(minutes=minute), **vars(operation))


def _edited_value(data: st.DataObject, column: str, old: Any, taken: list[int]) -> Any:
    strategies: dict[str, st.SearchStrategy[Any]] = {
        "seq": st.integers(-3, max(taken) + 3).filter(lambda s: s not in taken),
        "kind": st.just("entry" if old == "checkpoint" else "checkpoint"),
        "target": st.none() | TEXT,
        "why": st.none() | TEXT,
        "details": st.dictionaries(TEXT, JSON_VALUES, max_size=2).map(json.dumps),
        "prev_hash": st.text("0123456789abcdef", min_size=64, max_size=64),
        "hash": st.text("0123456789abcdef", min_size=64, max_size=64),
    }
    new = data.draw(strategies.get(column, TEXT), label=f"new {column}")
    assume(new != old)
    return new


@settings(max_examples=75, deadline=None)
@given(operations=OPERATIONS, data=st.data())
def test_any_history_verifies_and_any_single_edit_is_found(
    operations: list[Append | Prune], data: st.DataObject
) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        store = Store.open(Path(scratch) / "d", T0)
        try:
            for minute, operation in enumerate(operations):
                _run(store, operation, minute)
                assert _verify(store).ok
            taken = [r[0] for r in store.conn.execute("SELECT seq FROM audit_log")]
            assume(taken)
            seq = data.draw(st.sampled_from(taken), label="row")
            column = data.draw(st.sampled_from(COLUMNS), label="column")
            old = _row(store, seq)[column]
            new = _edited_value(data, column, old, taken)
            _tamper(store, f"UPDATE audit_log SET {column} = ? WHERE seq = ?", (new, seq))

            report = _verify(store)

            assert not report.ok
            if column != "seq":
                assert report.first_broken_seq == seq, report.problem
        finally:
            store.close()
