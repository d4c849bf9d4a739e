"""``coven doctor``: exit 0 when the store keeps its promises (warnings allowed), 3 when it
does not, 2 for bad input; one line per finding; a stable ``--json`` document."""

from __future__ import annotations

import json
import os
from pathlib import Path

import apsw
import pytest

from coven_core.integrity.doctor import CHECKS
from tests.core.cli.conftest import Coven, react
from tests.core.conftest import T0, Engine, minutes


def healthy(engine: Engine) -> None:
    """Two routines that ran, one failing; the leader has just made a pass."""
    engine.add("backup", "*/10 * * * *")
    engine.add("report", "@hourly")
    engine.run_until(T0 + minutes(25))
    engine.runtime.auto_exit = 1
    engine.run_until(T0 + minutes(61))
    react(engine)


def inject(data_dir: Path, sql: str) -> None:
    conn = apsw.Connection(str(data_dir / "coven.db"))
    try:
        conn.execute(sql)
    finally:
        conn.close()


def test_a_healthy_store_exits_0_with_a_check_mark_on_every_line(
    coven: Coven, on_engine_clock: Engine
) -> None:
    healthy(on_engine_clock)
    status, out, err = coven("doctor")
    assert (status, err) == (0, "")
    *findings, blank, verdict = out.splitlines()
    assert blank == "" and verdict == "0 errors, 0 warnings: the store keeps its promises"
    assert all(line.startswith("✓ ") for line in findings)
    checks = [line.split()[1] for line in findings]
    assert checks == sorted(checks, key=CHECKS.index) and set(checks) == set(CHECKS)
    assert "✓ evidence     every success has its exit evidence" in findings


def test_a_german_doctor_says_every_finding_in_german(
    coven: Coven, on_engine_clock: Engine, data_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The findings are said in the reader's language (DESIGN §12); ``--json`` keeps the
    English ``message`` scripts read."""
    healthy(on_engine_clock)
    inject(data_dir, "UPDATE routines SET consecutive_failures = 1 WHERE name = 'backup'")
    monkeypatch.setenv("LC_ALL", "de_DE.UTF-8")
    status, out, err = coven("doctor")
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert "✓ evidence     jeder Erfolg hat seinen Beleg für den Ausgang" in lines
    assert (
        "! counters     die Routine 'backup' zählt 1 Fehlschlag in Folge, ihr Verlauf zeigt aber 3 "
        "seit dem letzten Erfolg oder der letzten Freigabe: Quarantäne-Entscheidungen verwenden "
        "diese Zahl"
    ) in lines
    growth = [line for line in lines if line.startswith("✓ growth")]
    assert any("Datenspeicherdatei" in line and "Write-Ahead-Log" in line for line in growth)
    assert any(line.endswith(" Einträge") for line in lines if line.startswith("✓ audit"))
    english = ("every ", "store file", "the store is in", " file(s)", " rows", "leads at")
    assert not [line for line in lines if any(word in line for word in english)]
    messages = [finding["message"] for finding in coven.json("doctor")["findings"]]
    assert "every success has its exit evidence" in messages


def test_json_is_one_stable_document(coven: Coven, on_engine_clock: Engine) -> None:
    healthy(on_engine_clock)
    document = coven.json("doctor")
    assert list(document) == ["ok", "checked_at", "summary", "checks", "findings", "growth"]
    assert document["ok"] is True and document["checked_at"] == "2026-03-01T13:01:00Z"
    assert document["summary"]["errors"] == document["summary"]["warnings"] == 0
    assert document["checks"] == dict.fromkeys(CHECKS, "ok")
    for finding in document["findings"]:
        assert list(finding) == ["check", "severity", "message", "details"]
        assert finding["severity"] == "info" and "\n" not in finding["message"]
    growth = document["growth"]
    assert growth["tables"]["occurrences"]["rows"] == 8 and growth["wal_bytes"] >= 0
    assert set(growth) >= {"file_bytes", "free_bytes", "attempts", "output", "measured_by"}


def test_quick_leaves_out_growth(coven: Coven, on_engine_clock: Engine) -> None:
    healthy(on_engine_clock)
    document = coven.json("doctor", "--quick")
    assert document["ok"] is True and document["growth"] is None


def test_a_broken_promise_exits_3_naming_it_on_one_line(
    coven: Coven, on_engine_clock: Engine, data_dir: Path
) -> None:
    healthy(on_engine_clock)
    inject(data_dir, "UPDATE audit_log SET who = 'mallory' WHERE seq = 1")
    status, out, err = coven("doctor")
    assert status == 3
    assert err == "coven doctor: 1 error, 0 warnings: the store contradicts its promises\n"
    (line,) = [line for line in out.splitlines() if line.startswith("✗")]
    assert line == (
        "✗ audit        the audit log does not verify at entry 1: entry 1 was changed: its hash "
        "does not match its contents"
    )
    assert out.splitlines()[-1] == "1 error, 0 warnings: the store contradicts its promises"


def test_json_still_prints_the_document_when_a_promise_is_broken(
    coven: Coven, on_engine_clock: Engine, data_dir: Path
) -> None:
    healthy(on_engine_clock)
    inject(data_dir, "UPDATE attempts SET exit_code = 7 WHERE exit_code = 0")
    status, out, err = coven("doctor", "--json")
    document = json.loads(out)
    assert status == 3 and err.count("\n") == 1
    assert document["ok"] is False and document["checks"]["evidence"] == "error"
    errors = [f for f in document["findings"] if f["severity"] == "error"]
    assert {f["check"] for f in errors} == {"evidence"} and len(errors) == 4
    assert errors[0]["details"]["attempt_id"].endswith(".1")


def test_warnings_alone_exit_0(coven: Coven, on_engine_clock: Engine, data_dir: Path) -> None:
    healthy(on_engine_clock)
    inject(data_dir, "UPDATE routines SET consecutive_failures = 5 WHERE name = 'backup'")
    status, out, err = coven("doctor")
    assert (status, err) == (0, "")
    (line,) = [line for line in out.splitlines() if not line.startswith("✓")][:1]
    assert line.startswith("! counters     routine 'backup' counts 5 consecutive failures")
    assert out.splitlines()[-1] == "0 errors, 1 warning: the store keeps its promises"


def test_an_unknown_option_is_bad_input(coven: Coven) -> None:
    status, out, err = coven("doctor", "--thorough")
    assert (status, out) == (2, "")
    assert err.count("\n") == 1 and "unrecognized arguments: --thorough" in err


def test_a_store_that_cannot_be_opened_is_bad_input_naming_the_fix(
    coven: Coven, data_dir: Path
) -> None:
    coven.new_store()
    os.chmod(data_dir, 0o755)
    status, out, err = coven("doctor")
    assert (status, out) == (2, "")
    assert err.count("\n") == 1 and err.rstrip().endswith(f"Run: chmod 700 {data_dir}")
