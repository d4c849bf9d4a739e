"""``coven audit [--limit N] [--routine NAME]`` and ``coven audit verify`` (issue #5, DESIGN §13): operator actions on record, newest first, and a hash chain that shows an edited log."""

from __future__ import annotations

from pathlib import Path

import apsw
import pytest

from coven_core.store import schema
from coven_core.store.store import STORE_FILE
from tests.core.cli.conftest import Awaiting, Coven

pytest.importorskip(
    "coven_core.integrity.audit", reason="coven_core.integrity.audit is not there yet (issue #5)"
)
if not any("audit" in migration.name for migration in schema.MIGRATIONS):
    pytest.skip("the store has no audit_log table yet (issue #5)", allow_module_level=True)

YEARLY = ("--schedule", "0 0 1 1 *", "--tz", "UTC")


def tamper(data_dir: Path, sql: str) -> None:
    """Someone edits the store file behind the engine's back."""
    conn = apsw.Connection(str(data_dir / STORE_FILE))
    try:
        conn.execute(sql)
    finally:
        conn.close()


def actions(coven: Coven, *args: str) -> list[tuple[str, str | None]]:
    return [(entry["action"], entry["target"]) for entry in coven.json("audit", *args)["entries"]]


@pytest.fixture
def three(coven: Coven) -> Coven:
    """Three actions on record: add backup, add report, pause backup."""
    coven.add("backup", *YEARLY)
    coven.add("report", *YEARLY)
    coven.json("pause", "backup", "--reason", "disk swap")
    return coven


# -- the log --------------------------------------------------------------------------------
def test_actions_are_listed_newest_first(three: Coven) -> None:
    (newest, *_) = three.json("audit")["entries"]
    assert (newest["seq"], newest["action"], newest["target"]) == (3, "pause", "backup")
    assert (newest["why"], newest["result"], newest["kind"]) == ("disk swap", "ok", "entry")
    assert newest["who"] and newest["at"].endswith("Z") and len(newest["hash"]) == 64
    assert actions(three) == [("pause", "backup"), ("routine.add", "report"),
                              ("routine.add", "backup")]  # fmt: skip


def test_limit_and_routine_narrow_the_list(three: Coven) -> None:
    assert actions(three, "--limit", "1") == [("pause", "backup")]
    assert actions(three, "--routine", "backup") == [("pause", "backup"), ("routine.add", "backup")]
    assert actions(three, "--routine", "nobody") == []


def test_the_entries_beyond_the_limit_are_counted(three: Coven) -> None:
    """Issue 19, part 2: a limited list says how many older entries it leaves out."""
    assert three.json("audit", "--limit", "1")["older"] == 2
    assert three.json("audit", "--limit", "1", "--routine", "backup")["older"] == 1
    assert three.json("audit")["older"] == 0
    *_rows, last = three("audit", "--limit", "2")[1].splitlines()
    assert last == "… and 1 older (see them with --limit 3)"
    assert "older" not in three("audit")[1]


def test_the_log_reads_as_a_table(three: Coven) -> None:
    status, out, err = three("audit")
    assert (status, err) == (0, "")
    header, *rows = out.splitlines()
    assert header.split() == ["Seq", "UTC", "Who", "Action", "Target", "Why", "Result"]
    assert [row.split()[0] for row in rows] == ["3", "2", "1"]
    assert rows[0].split()[3:] == ["pause", "backup", "disk", "swap", "ok"]


def test_an_empty_log(coven: Coven) -> None:
    coven.new_store()
    assert coven.json("audit") == {"entries": [], "older": 0}
    assert coven("audit") == (0, "The audit log has no entries yet.\n", "")
    assert coven("audit", "verify") == (0, "the audit log verifies: 0 entries\n", "")


def test_a_reconciliation_is_on_record_with_its_evidence(coven: Coven, awaiting: Awaiting) -> None:
    (item,) = coven.json("attention")["items"]
    coven.json("reconcile", awaiting.run_id, "--as", "failed", "--reason", "half a backup")
    newest = coven.json("audit", "--limit", "1")["entries"][0]
    assert (newest["action"], newest["target"]) == ("reconcile.failed", awaiting.run_id)
    assert (newest["why"], newest["result"]) == ("half a backup", "ok")
    assert newest["details"]["evidence_digest"] == item["evidence_digest"]


# -- verify ---------------------------------------------------------------------------------
def test_an_untouched_log_verifies(three: Coven) -> None:
    assert three("audit", "verify") == (0, "the audit log verifies: 3 entries\n", "")
    expected = {"ok": True, "entries": 3, "pruned": 0}
    assert three.json("audit", "verify") == expected
    assert three.json("audit", "--json", "verify") == expected  # --json before the verb too


def test_an_edited_entry_is_named(three: Coven, data_dir: Path) -> None:
    tamper(data_dir, "UPDATE audit_log SET why = 'x' WHERE seq = 1")
    err = three.refuses("audit", "verify", status=3, message="entry 1 was changed")
    assert err == (
        "coven audit verify: the audit log does not verify at entry 1: "
        "entry 1 was changed: its hash does not match its contents\n"
    )
    three.refuses("audit", "verify", "--json", status=3, message="at entry 1")


def test_a_deleted_entry_is_named(three: Coven, data_dir: Path) -> None:
    tamper(data_dir, "DELETE FROM audit_log WHERE seq = 2")
    three.refuses("audit", "verify", status=3,
                  message="entry 2 is missing (seq jumps from 1 to 3)")  # fmt: skip


def test_an_unreadable_entry_is_named_when_listing(three: Coven, data_dir: Path) -> None:
    tamper(data_dir, "UPDATE audit_log SET at = 'yesterday' WHERE seq = 2")
    three.refuses("audit", message="audit entry 2 cannot be read")
    three.refuses("audit", "verify", status=3, message="at entry 2: entry 2 was changed")


# -- bad input ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["audit", "--limit", "0"], "argument --limit: 0 must be at least 1"),
        (["audit", "--limit", "many"], "argument --limit: 'many' is not a whole number"),
        (["audit", "prune"], "invalid choice: 'prune'"),
        (["audit", "verify", "--limit", "2"], "unrecognized arguments: --limit 2"),
    ],
)
def test_bad_input_exits_2_and_changes_nothing(three: Coven, args: list[str], message: str) -> None:
    three.refuses(*args, message=message)
