"""A run's detail window (issue #21) over real runs: its output, exit code, command and story;
opening a failure marks it seen; a running run ticks and can be cancelled; Esc closes it."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
import qasync
from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import QAbstractButton, QMessageBox
from pytestqt.qtbot import QtBot

from coven_core.events import EventKind
from coven_core.model import RevisionSpec
from coven_core.operator import Operator
from coven_core.queries import RunRow, runs
from coven_core.store.store import Store
from coven_desktop.desktop import Desktop
from coven_desktop.windows import run_times
from coven_desktop.windows.run_detail import RunDetailWindow
from coven_desktop.windows.run_model import Column, RunsModel
from tests.desktop.helpers import wait_for_event
from tests.desktop.windows.running import open_detail, quiet, row_of, run_once, start

TALKS = ("/bin/sh", "-c", "echo copying 3 files; echo 'rsync: connection refused' >&2; exit 3")
SLEEPS = ("/bin/sh", "-c", "echo started; exec sleep 60")


@pytest.fixture
def failed(desktop: Desktop, loop: qasync.QEventLoop) -> str:
    desktop.locale = "en_US"
    return run_once(desktop, loop, "backup", *TALKS)


def tab_titles(window: RunDetailWindow) -> list[str]:
    return [window.tabs.tabText(n).replace("&", "") for n in range(window.tabs.count())]


def test_a_real_commands_output_exit_and_command_are_shown(
    desktop: Desktop, loop: qasync.QEventLoop, failed: str
) -> None:
    window = open_detail(desktop, loop, failed)
    assert window.isWindow() and window.isVisible() and not window.isModal()
    assert window.routine.text() == "backup" and window.chip.text() == "Failed"
    assert window.sentence.text() == "Failed with exit 3: rsync: connection refused"
    assert window.fields["exit"].text() == "3"
    assert window.output.stdout.text.toPlainText() == "copying 3 files\n"
    assert window.output.stderr.text.toPlainText() == "rsync: connection refused\n"
    assert window.command_tab.command.toPlainText() == "/bin/sh -c " + (
        "'echo copying 3 files; echo '\"'\"'rsync: connection refused'\"'\"' >&2; exit 3'"
    )
    assert tab_titles(window) == ["Output", "Command", "Story", "Time zone"]  # no DST rule
    story = [window.story.decisions.item(n).text() for n in range(window.story.decisions.count())]
    assert story[0].startswith("Started by hand by ") and story[-1].startswith("Failed")
    assert window.story.attempts.row(0).cells[3] == "3"
    window.close()


def test_the_output_can_be_searched_and_its_files_opened(
    desktop: Desktop, loop: qasync.QEventLoop, failed: str, qtbot: QtBot, monkeypatch
) -> None:  # type: ignore[no-untyped-def]
    window = open_detail(desktop, loop, failed)
    output = window.output
    qtbot.keyClicks(output.search, "refused")
    assert output.matches.text() == "1 found"
    assert output.stderr.text.textCursor().selectedText() == "refused"  # the match is shown
    assert len(output.stderr.text.extraSelections()) == 1
    output.search.clear()
    qtbot.keyClicks(output.search, "nowhere")
    assert output.matches.text() == "Not found"
    opened: list[QUrl] = []
    monkeypatch.setattr(QDesktopServices, "openUrl", opened.append)
    output.stdout.open_file.click()
    output.stderr.open_folder.click()
    stdout_path = row_path(window, "stdout")
    assert [url.toLocalFile() for url in opened] == [stdout_path, stdout_path.rsplit("/", 1)[0]]
    window.close()


def test_a_command_that_printed_nothing_has_no_file_to_open_but_its_folder(
    desktop: Desktop, loop: qasync.QEventLoop
) -> None:
    desktop.locale = "en_US"
    window = open_detail(desktop, loop, run_once(desktop, loop, "silent", "/bin/true"))
    for stream in (window.output.stdout, window.output.stderr):
        assert stream.text.toPlainText() == ""
        assert stream.text.placeholderText() == "Nothing was written."
        assert not stream.open_file.isEnabled() and stream.open_folder.isEnabled()
    window.close()


@pytest.mark.parametrize(("viewer", "lines"), [("Etc/UTC", 1), ("America/New_York", 2)])
def test_the_routines_own_clock_is_added_only_where_it_reads_otherwise(
    desktop: Desktop, loop: qasync.QEventLoop, monkeypatch, viewer: str, lines: int
) -> None:  # type: ignore[no-untyped-def]
    """A routine in UTC seen on a host in Etc/UTC: one clock, said once."""
    monkeypatch.setattr(run_times, "viewer_zone_key", lambda: viewer)
    desktop.locale = "en_US"
    window = open_detail(desktop, loop, run_once(desktop, loop, "utc", "/bin/true"))
    planned = window.fields["planned"].text().splitlines()
    assert len(planned) == lines, planned
    assert planned[-1].endswith("(UTC) by the routine's clock") == (lines == 2)
    window.close()


def row_path(window: RunDetailWindow, stream: str) -> str:
    assert window.result is not None
    tail = getattr(window.result.detail, stream)
    return str(tail.path)


def test_opening_a_failed_run_marks_it_seen_and_the_tray_stops_counting_it(
    desktop: Desktop, loop: qasync.QEventLoop, failed: str
) -> None:
    assert desktop.overview is not None and desktop.overview.counts.failed_unseen == 1
    assert not row_of(desktop, loop, failed).seen
    window = open_detail(desktop, loop, failed)
    assert row_of(desktop, loop, failed).seen
    assert desktop.overview.counts.failed_unseen == 0  # the tray's count, refreshed
    window.close()


def test_a_running_run_ticks_and_cancel_asks_once_then_cancels_it(
    desktop: Desktop, loop: qasync.QEventLoop, qtbot: QtBot
) -> None:
    desktop.locale = "en_US"
    occurrence = start(desktop, loop, "sleeper", *SLEEPS)
    window = open_detail(desktop, loop, occurrence)
    assert window.chip.text() == "Running" and window.cancel_button.isVisible()
    assert window._labels["duration"].text() == "Elapsed"
    # not "Nothing was written." of a command that may yet write
    assert window.output.stderr.text.placeholderText() == "Nothing written yet."
    desktop.clock.advance(timedelta(minutes=1, seconds=5))  # type: ignore[attr-defined]
    qtbot.waitUntil(lambda: window.fields["duration"].text() == "1 min 5 sec", timeout=3000)
    window.cancel_button.click()
    box = window.confirmation
    assert isinstance(box, QMessageBox) and box.isVisible() and "sleeper" in box.text()
    assert row_of(desktop, loop, occurrence).outcome == "running"  # nothing yet: it asks first
    box.button(QMessageBox.StandardButton.Yes).click()
    wait_for_event(desktop, loop, lambda e: e.kind is EventKind.SETTLED)
    quiet(loop, desktop, window)
    assert row_of(desktop, loop, occurrence).outcome == "cancelled"
    assert window.chip.text() == "Cancelled" and not window.cancel_button.isVisible()
    assert window._labels["duration"].text() == "Duration"
    assert window.output.stderr.text.placeholderText() == "Nothing was written."
    window.close()


def test_keeping_it_running_cancels_nothing(desktop: Desktop, loop: qasync.QEventLoop) -> None:
    occurrence = start(desktop, loop, "sleeper", *SLEEPS)
    window = open_detail(desktop, loop, occurrence)
    window.cancel_button.click()
    box = window.confirmation
    assert box is not None
    box.button(QMessageBox.StandardButton.No).click()
    quiet(loop, desktop, window)
    assert row_of(desktop, loop, occurrence).outcome == "running"
    cancel = desktop.service.call(lambda e: e.operator.cancel_routine("sleeper"))
    wait_for_event(desktop, loop, lambda e: e.kind is EventKind.SETTLED, doing=cancel)
    window.close()


def test_esc_closes_it_and_opening_again_makes_a_new_one(
    desktop: Desktop, loop: qasync.QEventLoop, failed: str, qtbot: QtBot
) -> None:
    window = open_detail(desktop, loop, failed)
    desktop.window.open_run(failed)  # already open: the same window, raised
    assert desktop.window.run_windows[failed] is window
    window.activateWindow()
    qtbot.waitUntil(window.isActiveWindow, timeout=3000)
    qtbot.keyClick(window.output.search, Qt.Key.Key_Escape)  # wherever the focus is
    assert not window.isVisible()
    qtbot.waitUntil(lambda: failed not in desktop.window.run_windows, timeout=3000)  # deleted
    again = open_detail(desktop, loop, failed)
    assert again.isVisible()
    again.close()


def test_an_unknown_run_says_so(desktop: Desktop, loop: qasync.QEventLoop) -> None:
    desktop.window.open_run("nope")
    window = desktop.window.run_windows["nope"]
    assert isinstance(window, RunDetailWindow)
    loop.run_until_complete(asyncio.wait_for(window.settle(), 20))
    assert window.sentence.text() == "no run or occurrence 'nope' (see: coven runs)"
    window.close()


def test_retry_gives_a_failed_run_another_attempt_through_the_engine(
    desktop: Desktop, loop: qasync.QEventLoop, failed: str
) -> None:
    window = open_detail(desktop, loop, failed)
    assert window.retry_button.isVisible() and not window.cancel_button.isVisible()
    window.retry_button.click()
    assert not window.retry_button.isEnabled()  # one click, one retry
    wait_for_event(desktop, loop, lambda e: e.kind is EventKind.SETTLED)
    quiet(loop, desktop, window)
    row = row_of(desktop, loop, failed)
    assert (row.outcome, row.attempts) == ("failed", 2)  # the same run, a second attempt
    assert window.fields["attempts"].text() == "2" and window.retry_button.isEnabled()
    assert not window.refusal.isVisible()
    window.close()


def test_retry_is_not_offered_where_the_engine_would_refuse_it(
    desktop: Desktop, loop: qasync.QEventLoop
) -> None:
    """A command that does not exist fails as invalid: another attempt would fail the same
    way. The run's sentence says so, and no Retry is offered to be refused."""
    desktop.locale = "en_US"
    occurrence = run_once(desktop, loop, "typo", "/no/such/program")
    window = open_detail(desktop, loop, occurrence)
    assert window.chip.text() == "Failed" and not window.retry_button.isVisible()
    assert "the routine itself is invalid" in window.sentence.text()
    window.close()


def test_a_retry_refused_meanwhile_is_said_in_the_window(
    desktop: Desktop, loop: qasync.QEventLoop, failed: str
) -> None:
    """Offered, then refused: another process (the CLI, say) deleted the routine before the
    click, and the window has not heard yet. The refusal is the engine's, said under the
    header, and nothing else changes."""
    window = open_detail(desktop, loop, failed)
    assert window.retry_button.isVisible()
    cli = Store.open(desktop.data_dir, desktop.clock.now_utc())
    try:
        Operator(cli, desktop.clock, lambda _reason: None).delete_routine("backup")
    finally:
        cli.close()
    window.retry_button.click()  # before the loop turns: the window still offers it
    quiet(loop, desktop, window)
    assert window.refusal.isVisible()
    assert "belongs to the deleted routine backup" in window.refusal.text()
    assert row_of(desktop, loop, failed).outcome == "failed"  # its failure is kept
    window.close()


@pytest.mark.parametrize("locale", ["en_US", "de_DE"])
def test_a_running_runs_window_has_one_key_per_mnemonic(
    desktop: Desktop, loop: qasync.QEventLoop, locale: str
) -> None:
    """Alt and a letter reach one control: the tabs, Cancel run and what else is shown."""
    desktop.locale = locale
    window = open_detail(desktop, loop, start(desktop, loop, "sleeper", *SLEEPS))
    assert window.cancel_button.isVisible()
    texts = [button.text() for button in window.findChildren(QAbstractButton)
             if button.isVisible()]  # fmt: skip
    texts += [window.tabs.tabText(n) for n in range(window.tabs.count())]
    keys = [mnemonic(text) for text in texts if mnemonic(text)]
    assert len(keys) >= 5 and sorted(keys) == sorted(set(keys)), texts
    window.cancel_button.click()  # the run is not left behind
    assert window.confirmation is not None
    window.confirmation.button(QMessageBox.StandardButton.Yes).click()
    wait_for_event(desktop, loop, lambda e: e.kind is EventKind.SETTLED)
    window.close()


def mnemonic(text: str) -> str:
    """The letter after a single ``&`` (``&&`` is a literal ampersand), lower-cased."""
    at = text.replace("&&", "").find("&")
    return text.replace("&&", "")[at + 1].lower() if at >= 0 else ""


def test_a_run_caught_up_late_says_why_under_its_start(
    desktop: Desktop, loop: qasync.QEventLoop
) -> None:
    """Its moment came while the computer slept: the start, hours after the moment, says
    why beneath it."""
    desktop.locale = "en_US"
    spec = RevisionSpec(schedule="30 12 * * *", timezone="UTC", argv=("/bin/true",))
    loop.run_until_complete(desktop.service.call(lambda e: e.operator.add_routine("nightly", spec)))

    async def settled() -> RunRow:  # read from the store: the run may end before any wait
        while True:
            found = await desktop.service.call(lambda e: runs(e.store, "nightly"))
            if found and found[0].outcome == "succeeded":
                return found[0]
            await asyncio.sleep(0.02)

    desktop.clock.suspend(timedelta(hours=3))  # type: ignore[attr-defined]
    row = loop.run_until_complete(asyncio.wait_for(settled(), 20))
    loop.run_until_complete(desktop.settle())
    window = open_detail(desktop, loop, row.occurrence_id)
    started = window.fields["started"].text().splitlines()
    assert started[1] == "Caught up: its moment passed while asleep"
    window.close()
    model = RunsModel("en_US")  # and the Runs page's "What happened", where its chip says how
    model.set_rows([row], desktop.clock.now_utc())
    assert model.text(row, Column.WHY) == "Caught up: its moment passed while asleep"
    assert model.data(model.index(0, Column.WHY), Qt.ItemDataRole.ToolTipRole) == (
        f"{row.reason}\nCaught up: its moment passed while asleep"
    )
