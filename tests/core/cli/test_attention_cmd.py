"""``coven attention``: what needs a person, with the evidence to decide (issue #5).

The run that needs a person is made by the engine under virtual time (a leader dies while its
command runs; the next cannot know how it ended); ``coven`` then shows it as a person sees it.
"""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from coven_core.cli.attention_output import print_items
from coven_core.views.attention import AttemptEvidence, Item, attention
from tests.core.cli.conftest import Awaiting, Coven

DECIDE = (
    "coven reconcile {run} --as succeeded --reason TEXT",
    "coven reconcile {run} --as failed --reason TEXT",
    "coven reconcile {run} --as retry --verified-no-side-effect --reason TEXT",
)


def test_the_run_is_listed_with_its_evidence(coven: Coven, awaiting: Awaiting) -> None:
    doc = coven.json("attention")
    (item,) = doc["items"]
    assert (item["kind"], item["run_id"], item["routine"]) == (
        "recovery_required", awaiting.run_id, "backup"
    )  # fmt: skip
    assert item["occurrence_id"] == awaiting.occurrence_id
    assert re.fullmatch(r"[0-9a-f]{64}", item["evidence_digest"])
    (attempt,) = item["attempts"]
    assert (attempt["failure_class"], attempt["runner_pid"]) == ("ambiguous", 4242)
    assert attempt["runner_alive"] is False and attempt["command_alive"] is False
    assert any(" claimed " in step for step in item["tried"])


def test_json_is_the_engines_items_as_they_are(coven: Coven, awaiting: Awaiting) -> None:
    engine = awaiting.engine
    items = attention(engine.store, engine.clock.now_utc())
    expected = {"items": [item.to_json() for item in items], "broken_routines": []}
    assert coven.json("attention") == expected


def test_the_evidence_reads_well(
    coven: Coven, awaiting: Awaiting, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LC_ALL", "de_DE.UTF-8")
    digest = coven.json("attention")["items"][0]["evidence_digest"]
    status, out, err = coven("attention")
    assert (status, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == f"recovery_required · Ausführung {awaiting.run_id} · backup"
    # German throughout: labels, dates and the engine's own words (notation/reasons).
    assert "  Geplant:   01.03.2026, 12:00:00 (UTC)" in lines
    assert f"  Termin:    {awaiting.occurrence_id}" in lines
    assert "  Grund:     Ausgang unbekannt: der Planer hielt an, während der Befehl womöglich " \
        "lief; Ausgang unbekannt; nicht wiederholt: sie ist womöglich gelaufen (die Routine " \
        "ist nicht idempotent)" in lines  # fmt: skip
    assert f"  Belege:    {digest[:12]} (vollständig: coven attention --json)" in lines
    assert "  Versuch 1: Ausgang unbekannt — der Planer hielt an, während der Befehl womöglich " \
        "lief; Ausgang unbekannt" in lines  # fmt: skip
    # when Coven found the runner gone: not when the command ended, which no record says
    assert "    Abgeschlossen:  01.03.2026, 12:12:01, kein Ausgang verzeichnet" in lines
    assert "    Runner:         pid 4242 · verschwunden" in lines
    assert "    Befehl:         keine PID verzeichnet" in lines
    assert "    Journal: (keine)" in lines and "    stdout: (keine)" in lines
    assert any(line.startswith("    2026-03-01T12:00:00Z claimed ") for line in lines)
    assert lines[-4:] == [
        "  Entscheiden Sie mit einem von:",
        *(f"    {c.format(run=awaiting.run_id)}" for c in DECIDE),
    ]  # fmt: skip


def test_nothing_needs_attention(coven: Coven) -> None:
    coven.add("backup", "--schedule", "@daily", "--tz", "UTC")
    assert coven.json("attention") == {"items": [], "broken_routines": []}
    assert coven("attention") == (0, "Nothing needs your attention.\n", "")


def test_a_decided_run_leaves_the_list(coven: Coven, awaiting: Awaiting) -> None:
    coven.json("reconcile", awaiting.run_id, "--as", "failed", "--reason", "half a backup")
    assert coven.json("attention") == {"items": [], "broken_routines": []}


def test_after_a_decision_routine_show_says_why_it_is_paused_in_the_readers_words(
    coven: Coven, awaiting: Awaiting, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The state stays a key (what scripts and --shadow use); the engine's reason is German."""
    coven.json("reconcile", awaiting.run_id, "--as", "failed", "--reason", "half a backup")
    monkeypatch.setenv("LC_ALL", "de_DE.UTF-8")
    shown = coven("routine", "show", "backup")[1].splitlines()
    assert f"Zustand:         paused (pausiert nach einer Entscheidung zu Ausführung " \
        f"{awaiting.run_id}; fortsetzen, wenn Sie so weit sind)" in shown  # fmt: skip


def test_bad_input_exits_2(coven: Coven, awaiting: Awaiting) -> None:
    coven.refuses("attention", "backup", message="unrecognized arguments: backup")


# -- evidence the scripted runtime does not leave: journal, output, live processes ----------
def _evidence(**changes: object) -> AttemptEvidence:
    attempt = AttemptEvidence(
        number=1, attempt_id="run1.1", state="running", failure_class=None, message=None,
        claimed_at="2026-03-01T12:00:00.000000Z", started_at="2026-03-01T12:00:01.000000Z",
        exited_at=None, runner_pid=101, runner_alive=True, command_pid=102,
        command_alive=False, cancel_requested_at=None,
    )  # fmt: skip
    return replace(attempt, **changes)  # type: ignore[arg-type]


def _item(attempt: AttemptEvidence, kind: str = "recovery_required") -> Item:
    return Item(
        kind, "run1", "r1@20260301T120000Z", "backup", "r1", "2026-03-01T12:00:00.000000Z",
        "recovery_required", "ambiguous", [attempt], ["2026-03-01T12:00:00Z planned {}"],
    )  # fmt: skip


def _printed(capsys: pytest.CaptureFixture[str], item: Item, zone: str = "UTC") -> list[str]:
    print_items([item], {"r1": zone}, {})
    return capsys.readouterr().out.splitlines()


def test_journal_records_show_event_and_time(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LC_ALL", "de_DE.UTF-8")
    journal = [{"event": f"e{n}", "at": f"2026-03-01T12:00:0{n}+00:00"} for n in range(7)]
    journal.append({"unreadable": "{half a rec"})
    attempt = _evidence(journal=journal, journal_problems=["line 8: not JSON"])
    lines = _printed(capsys, _item(attempt), zone="Europe/Berlin")
    start = lines.index("    Journal:")
    assert lines[start + 1 : start + 8] == [
        "      … (3 frühere)",
        "      01.03.2026, 13:00:03  e3",
        "      01.03.2026, 13:00:04  e4",
        "      01.03.2026, 13:00:05  e5",
        "      01.03.2026, 13:00:06  e6",
        "      unlesbar: {half a rec",
        "      Problem: line 8: not JSON",
    ]
    assert "  Geplant:   01.03.2026, 13:00:00 (Europe/Berlin)" in lines


def test_output_tails_show_the_last_ten_lines(capsys: pytest.CaptureFixture[str]) -> None:
    stdout = "".join(f"line {n}\n" for n in range(1, 26))
    lines = _printed(capsys, _item(_evidence(stdout_tail=stdout, stderr_tail="disk full\n")))
    start = lines.index("    stdout:")
    assert lines[start + 1 : start + 12] == [
        "      | … (15 earlier)", *(f"      | line {n}" for n in range(16, 26))
    ]  # fmt: skip
    assert lines[lines.index("    stderr:") + 1] == "      | disk full"


def test_live_processes_are_named(capsys: pytest.CaptureFixture[str]) -> None:
    lines = _printed(capsys, _item(_evidence(command_alive=True)))
    assert "    Runner:   pid 101 · alive" in lines
    assert "    Command:  pid 102 · alive" in lines


def test_only_an_unknown_outcome_is_reconciled(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LC_ALL", "de_DE.UTF-8")
    attempt = _evidence(cancel_requested_at="2026-03-01T12:05:00.000000Z")
    lines = _printed(capsys, _item(attempt, kind="stuck_cancel"))
    assert lines[0] == "stuck_cancel · Ausführung run1 · backup"
    assert "    Abbruch angefordert:  01.03.2026, 12:05:00" in lines
    assert lines[-2:] == ["  Genauer ansehen mit:", "    coven inspect run1"]
    assert not any("coven reconcile" in line for line in lines)


def test_an_attempt_with_no_exit_recorded_is_settled_not_exited(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The time Coven gave up on a gone runner is not when its command ended: the command may
    still run (it did, on X: "Exited" beside "Command: pid … · alive")."""
    monkeypatch.setenv("LC_ALL", "de_DE.UTF-8")
    given_up = _evidence(exited_at="2026-03-01T12:00:05.000000Z", command_alive=True,
                         journal=[{"event": "spawned", "at": "2026-03-01T12:00:01+00:00"}])  # fmt: skip
    lines = _printed(capsys, _item(given_up))
    assert "    Abgeschlossen:  01.03.2026, 12:00:05, kein Ausgang verzeichnet" in lines
    assert not any("Beendet:" in line for line in lines)
    exited = replace(given_up, journal=[*given_up.journal,
                                        {"event": "exited", "at": "2026-03-01T12:00:05+00:00"}])  # fmt: skip
    assert "    Beendet:    01.03.2026, 12:00:05" in _printed(capsys, _item(exited))
