"""The Needs attention window, driven through its widgets (issue #8, DESIGN §5)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
import qasync
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from coven_core.integrity import audit
from coven_core.model import RoutineState
from coven_core.queries import show
from coven_core.views.attention import Item
from coven_core.views.inspection import inspect
from coven_desktop.desktop import Desktop
from coven_desktop.windows.reconciliation import Page
from tests.desktop.windows.awaiting import Awaiting, make_awaiting, stop_command


@pytest.fixture
def awaiting(desktop: Desktop, loop: qasync.QEventLoop) -> Iterator[Awaiting]:
    found = make_awaiting(desktop, loop)
    yield found
    stop_command(found)


@pytest.fixture
def page(desktop: Desktop, loop: qasync.QEventLoop, awaiting: Awaiting) -> Page:
    shown = desktop.window.show_page("reconciliation")
    loop.run_until_complete(desktop.window.settle())
    assert isinstance(shown, Page)
    return shown


def state_of(desktop: Desktop, loop: qasync.QEventLoop, routine: str) -> RoutineState:
    view = loop.run_until_complete(desktop.service.call(lambda e: show(e.store, routine)))
    return view.routine.state


def occurrence(desktop: Desktop, loop: qasync.QEventLoop, run_id: str) -> dict[str, object]:
    found = loop.run_until_complete(desktop.service.call(lambda e: inspect(e.store, run_id)))
    return found["occurrence"]  # type: ignore[no-any-return]


def click(qtbot: QtBot, loop: qasync.QEventLoop, page: Page, button) -> None:  # type: ignore[no-untyped-def]
    qtbot.mouseClick(button, Qt.MouseButton.LeftButton)
    loop.run_until_complete(page.settle())


def test_the_evidence_is_shown(page: Page, awaiting: Awaiting, qtmodeltester) -> None:  # type: ignore[no-untyped-def]
    assert "1 run(s) need your decision" in page.headline.text()
    assert page.item_model.rowCount() == 1
    assert page.shown is not None and page.shown.run_id == awaiting.run_id
    assert awaiting.run_id in page.summary.text()
    records = [page.journal_model.row(n).cells[2] for n in range(page.journal_model.rowCount())]
    assert records[:3] == ["runner_started", "intent", "spawned"]
    processes = [page.process_model.row(n).cells for n in range(page.process_model.rowCount())]
    assert [cells[1] for cells in processes] == ["runner", "command"]
    assert processes[0][4] == "no"  # the runner was killed
    assert processes[1][4] == "yes, still running"  # its command outlived it
    assert "copying 1 of 3" in page.output.toPlainText()
    for model in (
        page.item_model,
        page.attempt_model,
        page.process_model,
        page.journal_model,
        page.tried_model,
    ):
        qtmodeltester.check(model)


def test_no_decision_while_the_command_runs_until_it_is_stopped(
    page: Page, desktop: Desktop, loop: qasync.QEventLoop, qtbot: QtBot, awaiting: Awaiting
) -> None:
    """Issue #18: a retry here used to start a second copy next to the running command."""
    assert page.stop_button.isVisible()
    page.verified.click()
    qtbot.keyClicks(page.reason, "nothing was copied yet")
    click(qtbot, loop, page, page.retry_button)
    refusal = page.decision_error.text()  # the engine's own words
    assert f"its command (pid {awaiting.command_pid}, attempt 1)" in refusal
    assert f"coven stop {awaiting.run_id}" in refusal
    assert occurrence(desktop, loop, awaiting.run_id)["disposition"] == "recovery_required"
    click(qtbot, loop, page, page.stop_button)
    assert "Stopped: " in page.stop_result.text() and not page.decision_error.isVisible()
    assert not page.stop_button.isVisible()  # nothing of it runs any more
    entry = loop.run_until_complete(
        desktop.service.call(lambda e: audit.recent(e.store, target=awaiting.run_id, limit=1))
    )[0]
    assert (entry.action, entry.why) == ("stop.result", "nothing was copied yet")
    page.verified.setChecked(True)
    click(qtbot, loop, page, page.retry_button)
    assert "to be retried" in page.decided_text.text()


def test_it_failed_with_a_reason_is_recorded_audited_and_pauses(
    page: Page, desktop: Desktop, loop: qasync.QEventLoop, qtbot: QtBot, awaiting: Awaiting
) -> None:
    click(qtbot, loop, page, page.stop_button)  # no decision while the command runs
    qtbot.keyClicks(page.reason, "the copy stopped half way")
    click(qtbot, loop, page, page.failed_button)

    found = occurrence(desktop, loop, awaiting.run_id)
    assert (found["disposition"], found["reconciled_as"]) == ("reconciled", "failed")
    entry = loop.run_until_complete(
        desktop.service.call(lambda e: audit.recent(e.store, target=awaiting.run_id, limit=1))
    )[0]
    assert (entry.action, entry.why, entry.result) == (
        "reconcile.failed",
        "the copy stopped half way",
        "ok",
    )
    assert state_of(desktop, loop, "backup") is RoutineState.PAUSED
    assert page.banner.isVisible()
    assert "the copy stopped half way" in page.decided_text.text()
    assert f"Audit entry {entry.seq}: reconcile.failed" in page.audit_text.text()
    assert "backup is paused" in page.paused_text.text()
    assert page.item_model.rowCount() == 0  # nothing else waits

    click(qtbot, loop, page, page.resume_button)
    assert state_of(desktop, loop, "backup") is RoutineState.ACTIVE
    assert "active again" in page.paused_text.text()
    assert not page.resume_button.isVisible()


def test_an_empty_reason_shows_an_error_and_changes_nothing(
    page: Page, desktop: Desktop, loop: qasync.QEventLoop, qtbot: QtBot, awaiting: Awaiting
) -> None:
    qtbot.keyClicks(page.reason, "   ")
    click(qtbot, loop, page, page.succeeded_button)
    assert page.decision_error.isVisible()
    assert "Give a reason" in page.decision_error.text()
    assert occurrence(desktop, loop, awaiting.run_id)["disposition"] == "recovery_required"
    assert not page.banner.isVisible()


def test_retry_waits_for_the_check_box(
    page: Page, desktop: Desktop, loop: qasync.QEventLoop, qtbot: QtBot, awaiting: Awaiting
) -> None:
    click(qtbot, loop, page, page.stop_button)  # no decision while the command runs
    assert page.succeeded_button.isEnabled() and not page.retry_button.isEnabled()
    page.verified.click()
    assert page.retry_button.isEnabled()
    qtbot.keyClicks(page.reason, "nothing was copied yet")
    click(qtbot, loop, page, page.retry_button)
    found = occurrence(desktop, loop, awaiting.run_id)
    assert found["disposition"] is None  # a new attempt comes; the routine stays paused
    assert state_of(desktop, loop, "backup") is RoutineState.PAUSED
    assert "to be retried" in page.decided_text.text()


def test_evidence_that_changed_since_it_was_shown_is_refused_and_shown_again(
    page: Page, desktop: Desktop, loop: qasync.QEventLoop, qtbot: QtBot, awaiting: Awaiting
) -> None:
    attempt = loop.run_until_complete(
        desktop.service.call(lambda e: inspect(e.store, awaiting.run_id))
    )["attempts"][0]
    stop_command(awaiting)  # the command ends: "running now" is no longer true
    with open(f"{attempt['attempt_dir']}/stdout", "a", encoding="utf-8") as out:
        out.write("copying 2 of 3\n")
    qtbot.keyClicks(page.reason, "it looked done")
    click(qtbot, loop, page, page.succeeded_button)
    assert "changed since it was shown" in page.decision_error.text()
    assert occurrence(desktop, loop, awaiting.run_id)["disposition"] == "recovery_required"
    assert "copying 2 of 3" in page.output.toPlainText()  # shown as it is now
    assert page.changed_note.isVisible()


def test_a_failing_delivery_is_shown_but_not_for_a_decision(
    desktop: Desktop, loop: qasync.QEventLoop
) -> None:
    page = desktop.window.show_page("reconciliation")
    loop.run_until_complete(desktop.window.settle())
    assert isinstance(page, Page)
    assert page.headline.text().startswith("Nothing needs your attention")
    assert not page.splitter.isVisible()
    item = Item(
        "delivery_failing", "run1", "r1@20260301T120000Z", "backup", "r1",
        "2026-03-01T12:00:00.000000Z", "succeeded", None, [], [],
        delivery_error="No space left on device",
    )  # fmt: skip
    page.show_items([item])
    assert "No space left on device" in page.summary.text()
    assert not page.failed_button.isEnabled() and not page.reason.isEnabled()
    assert page.item_model.row(0).cells[2] == "its output to be delivered"
