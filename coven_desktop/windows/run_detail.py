"""A run's detail (DESIGN §12, issue #21): its own non-modal window — Esc closes it — with
the routine, how the run ended in one sentence, planned and actual times with their zone,
duration, exit code or signal; and tabs: Output (both streams' ends, searchable, the files one
click away), Command (the command line and working directory), Story (attempts and decisions in
sentences) and Time zone (the DST explanation, first when a time-zone rule decided the moment,
else last). A running run ticks its elapsed time and offers Cancel.

Opening a failed run marks it seen (``Operator.mark_seen``): the tray stops counting it. The
window reloads on the engine's news while its run can still change.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFont, QFontDatabase, QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QPlainTextEdit,
    QPushButton,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from coven_core import queries
from coven_core.engine import Engine
from coven_core.errors import CovenError
from coven_core.queries import AttemptLine, RunDetail, RunRow, _, run_detail
from coven_desktop.tasks import Tasks
from coven_desktop.windows import run_times
from coven_desktop.windows.cancelling import ask_to_cancel
from coven_desktop.windows.chips import chip_style
from coven_desktop.windows.common import (
    Row,
    RowsModel,
    act,
    error_label,
    named,
    show_error,
    table,
)
from coven_desktop.windows.explanation import Explained, ExplanationPanel, read_explanation
from coven_desktop.windows.run_model import CANCELLABLE, LIVE, RETRYABLE, OutcomeWords
from coven_desktop.windows.run_output import OutputPane
from coven_desktop.windows.ticking import Ticker
from coven_desktop.windows.tones import Tones

if TYPE_CHECKING:
    from PySide6.QtWidgets import QMessageBox

    from coven_desktop.desktop import Desktop

#: Outcomes the tray counts until a person has opened the run.
COUNTED_UNTIL_SEEN = frozenset({"failed", "timed_out"})
#: A run in these may still change: the window follows the engine's news.
CHANGING = LIVE | {"recovery_required"}


@dataclass(frozen=True)
class Loaded:
    detail: RunDetail
    explained: Explained | None
    unexplained: str | None  # why the time-zone explanation could not be read
    retryable: bool = False  # the engine would give it another attempt now


def read(engine: Engine, identifier: str, now: datetime, locale: str) -> Loaded:
    """The run, whether it can be retried and its time-zone explanation, in one call on the
    operator thread."""
    detail = run_detail(engine.store, identifier, now, locale)
    row = detail.row
    retryable = (
        row.outcome in RETRYABLE and row.run_id is not None
        and queries.retry_refusal(engine.store, row.run_id) is None
    )  # fmt: skip
    try:
        explained = read_explanation(engine, row.routine, row.occurrence_id, now, locale)
    except CovenError as error:  # a deleted routine, a coalesced window: the run still shows
        return Loaded(detail, None, str(error), retryable)
    return Loaded(detail, explained, None, retryable)


class RunDetailWindow(QWidget):
    loaded = Signal()
    failed = Signal(str)

    def __init__(self, desktop: Desktop, identifier: str, parent: QWidget) -> None:
        super().__init__(parent, Qt.WindowType.Window)  # its own window, never modal
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.desktop, self.identifier = desktop, identifier
        self.result: Loaded | None = None
        self.confirmation: QMessageBox | None = None
        self._tasks = Tasks()
        self._words = OutcomeWords(self)
        self._ticker = Ticker(self, self._live, self._tick)
        self.setWindowTitle(_("Run"))
        self.resize(780, 600)
        self._build()
        closing = QShortcut(QKeySequence(Qt.Key.Key_Escape), self)  # a secondary window
        closing.activated.connect(self.close)
        desktop.overviewChanged.connect(self._on_news)

    # -- layout -----------------------------------------------------------------------------
    def _build(self) -> None:
        layout = QVBoxLayout(self)
        layout.addLayout(self._header())
        self.refusal = error_label(self, Tones(self))
        layout.addWidget(self.refusal)
        self.facts = QFormLayout()
        self.facts.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
        self.fields = {key: self._field() for key in ("planned", "started", "duration", "exit",
                                                      "attempts")}  # fmt: skip
        names = {"planned": _("Planned"), "started": _("Started"),
                 "duration": _("Duration"), "exit": _("Exit"),
                 "attempts": _("Attempts")}  # fmt: skip
        self._labels = {key: QLabel(name, self) for key, name in names.items()}
        for key, field in self.fields.items():
            self.facts.addRow(self._labels[key], field)
        layout.addLayout(self.facts)
        self.tabs = QTabWidget(self)
        self.output = OutputPane(self.tabs)
        self.command_tab = CommandPane(self.tabs)
        self.story = StoryPane(self.tabs)
        self.zone_tab = ExplanationPanel(self.tabs, details=False)
        layout.addWidget(self.tabs, 1)

    def _header(self) -> QHBoxLayout:
        line = QHBoxLayout()
        self.routine = QLabel(self)
        self.routine.setTextFormat(Qt.TextFormat.PlainText)
        font = QFont(self.routine.font())
        font.setBold(True)
        font.setPointSizeF(font.pointSizeF() * 1.3)
        self.routine.setFont(font)
        self.chip = QLabel(self)
        self.sentence = QLabel(self)
        self.sentence.setWordWrap(True)
        self.sentence.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.cancel_button = QPushButton(_("&Cancel run…"), self)
        self.cancel_button.clicked.connect(self.cancel)
        self.cancel_button.hide()
        self.retry_button = named(QPushButton(_("&Retry"), self), _("Retry this run"))
        self.retry_button.setToolTip(_("Give this run another attempt now"))
        self.retry_button.clicked.connect(self.retry)
        self.retry_button.hide()
        line.addWidget(self.routine)
        line.addWidget(self.chip)
        line.addWidget(self.sentence, 1)
        line.addWidget(self.cancel_button)
        line.addWidget(self.retry_button)
        return line

    def _field(self) -> QLabel:
        label = QLabel(self)
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        return label

    # -- loading ----------------------------------------------------------------------------
    def start_loading(self) -> None:
        self._tasks.spawn(self.reload())

    async def settle(self) -> None:
        """Wait for the loading in flight (tests, the demo renderer)."""
        await self._tasks.settle()

    async def reload(self) -> None:
        identifier, locale, now = self.identifier, self.desktop.locale, self.desktop.clock.now_utc()
        try:
            result = await self.desktop.service.call(lambda e: read(e, identifier, now, locale))
        except CovenError as error:
            if isValid(self):
                self.sentence.setText(str(error))
                self.failed.emit(str(error))
            return
        if not isValid(self):
            return  # closed (and deleted) while it was reading
        first = self.result is None
        self.result = result
        self._show(result, first)
        self._mark_seen(result.detail.row)
        self.loaded.emit()

    def _on_news(self, _overview: object) -> None:
        result = self.result
        if result is not None and result.detail.row.outcome in CHANGING:
            self._tasks.spawn(self.reload())

    def _mark_seen(self, row: RunRow) -> None:
        """A failure the tray counts is seen once a person opened it (DESIGN §12)."""
        if row.outcome in COUNTED_UNTIL_SEEN and not row.seen:
            occurrence = row.occurrence_id
            self.desktop.act(lambda e: e.operator.mark_seen(occurrence))

    # -- showing ----------------------------------------------------------------------------
    def _show(self, result: Loaded, first: bool) -> None:
        detail, row, locale = result.detail, result.detail.row, self.desktop.locale
        self.setWindowTitle(_("{routine} — run of {when}").format(
            routine=row.routine, when=run_times.when(row.planned_utc, locale)))  # fmt: skip
        self.routine.setText(row.routine)
        self.chip.setText(self._words(row.outcome))
        self.chip.setStyleSheet(chip_style(row.outcome))
        self.sentence.setText(row.reason)
        self._show_facts(row)
        self.cancel_button.setVisible(row.outcome in CANCELLABLE and row.run_id is not None)
        # Offered only where the engine would plan it: a run that no attempt could mend (an
        # invalid routine) says so in its own sentence, and a button it refuses says nothing.
        self.retry_button.setVisible(result.retryable)
        self.retry_button.setEnabled(True)
        self.output.show_output(detail.stdout, detail.stderr, row.outcome in LIVE)
        self.command_tab.show_command(detail)
        self.story.show_story(detail, locale, self._words)
        if result.explained is not None:
            self.zone_tab.show_result(result.explained)
        else:
            self.zone_tab.show_failure(result.unexplained or "")
        if first:
            self._order_tabs(row)
        self._ticker.follow()

    def _order_tabs(self, row: RunRow) -> None:
        """The Time zone tab first only when a time-zone rule decided this moment."""
        tabs = [(self.output, _("&Output")), (self.command_tab, _("Co&mmand")),
                (self.story, _("&Story"))]  # fmt: skip
        zone = (self.zone_tab, _("&Time zone"))
        for widget, title in [zone, *tabs] if row.dst else [*tabs, zone]:
            self.tabs.addTab(widget, title)
        self.tabs.setCurrentIndex(0)

    def _show_facts(self, row: RunRow) -> None:
        self.fields["planned"].setText(self._planned(row))
        started, locale = row.started_at, self.desktop.locale
        said = _("Not started") if started is None else run_times.full(started, locale)
        if row.caught_up is not None:  # why it started long after its moment
            said += "\n" + queries.caught_up(row.caught_up, locale)
        self.fields["started"].setText(said)
        self.fields["exit"].setText(self._words.exit_text(row.exit_code, row.exit_signal))
        self.fields["attempts"].setText(str(row.attempts))
        self._show_duration(row)

    def _planned(self, row: RunRow) -> str:
        """In the viewer's zone; with the routine's own clock where that differs. A wall time
        the clocks skipped only by that clock: as an instant it would read as the hour after."""
        locale, viewer = self.desktop.locale, run_times.viewer_zone_key()
        wall = run_times.wall_in(row.planned_local, row.planned_utc, row.zone, locale)
        if row.dst == "gap":
            return _("{wall} by the routine's clock, a time the clocks skipped").format(wall=wall)
        planned = _("{when} ({zone})").format(
            when=run_times.full(row.planned_utc, locale),
            zone=run_times.zone_name(viewer, row.planned_utc, locale),
        )
        if not run_times.same_clock(row.planned_utc, row.zone, viewer):
            planned += "\n" + _("{wall} by the routine's clock").format(wall=wall)
        return planned

    def _show_duration(self, row: RunRow) -> None:
        live = row.outcome in LIVE
        self._labels["duration"].setText(_("Elapsed") if live else _("Duration"))
        seconds = row.seconds_at(self.desktop.clock.now_utc())
        self.fields["duration"].setText(run_times.length(seconds, self.desktop.locale))

    # -- elapsed time and cancel ------------------------------------------------------------
    def _live(self) -> bool:
        return self.result is not None and self.result.detail.row.outcome in LIVE

    def _tick(self) -> None:
        if self.result is not None:
            self._show_duration(self.result.detail.row)

    def cancel(self) -> None:
        """Ask once, then cancel the run through the operator."""
        if self.result is None:
            return
        row = self.result.detail.row
        run_id = row.run_id
        if run_id is None or row.outcome not in CANCELLABLE:
            return
        self.confirmation = ask_to_cancel(
            self.desktop, self, row.routine, lambda e: e.operator.cancel(run_id)
        )

    def retry(self) -> None:
        """Another attempt of this run, as ``coven retry`` asks it. The engine decides: it
        refuses a run that may still be running or that no attempt could mend, and the
        refusal is said here."""
        row = self.result.detail.row if self.result is not None else None
        if row is None or row.run_id is None or row.outcome not in RETRYABLE:
            return
        self.retry_button.setEnabled(False)  # one click, one retry
        self._tasks.spawn(self._retry(row.run_id))

    async def _retry(self, run_id: str) -> None:
        done = await act(self.desktop, lambda e: e.operator.retry(run_id))
        if not isValid(self):
            return
        show_error(self.refusal, done.refusal)
        await self.reload()


def _monospace(widget: QWidget) -> None:
    widget.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))


class CommandPane(QWidget):
    """What ran: the command line (as a shell would read it), the working directory and the
    routine's revision it was planned under."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.command = QPlainTextEdit(self)
        self.command.setReadOnly(True)
        self.command.setAccessibleName(_("Command line"))
        self.command.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.command.setMaximumHeight(self.command.fontMetrics().height() * 6)
        self.cwd = QLineEdit(self)
        self.cwd.setReadOnly(True)
        self.cwd.setAccessibleName(_("Working directory"))
        self.revision = QLabel(self)
        for widget in (self.command, self.cwd):
            _monospace(widget)
        form = QFormLayout()
        form.addRow(_("Command line"), self.command)
        form.addRow(_("Working directory"), self.cwd)
        form.addRow(_("Revision"), self.revision)
        layout = QVBoxLayout(self)
        layout.addLayout(form)
        layout.addStretch(1)  # the rows at the top, not spread over the tab

    def show_command(self, detail: RunDetail) -> None:
        self.command.setPlainText(detail.command)
        self.cwd.setText(detail.cwd or "")
        self.cwd.setPlaceholderText(_("Not set: where Coven itself was started"))
        self.revision.setText(
            _("{number} (the routine as it was when this moment was planned)").format(
                number=detail.revision
            )
        )


class StoryPane(QWidget):
    """What happened, in sentences, oldest first; and each attempt's facts."""

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.decisions = QListWidget(self)
        self.decisions.setWordWrap(True)
        self.decisions.setSpacing(3)
        self.decisions.setAccessibleName(_("What happened"))
        self.attempts = RowsModel([_("Attempt"), _("Started"), _("Ended"),
                                   _("Exit"), _("Failure"), _("Timeout"),
                                   _("Message")], self)  # fmt: skip
        self.attempts_view = table(self.attempts, self, stretch=6, wrap=True)
        self.attempts_view.setAccessibleName(_("Attempts"))
        self.attempts_view.setTabKeyNavigation(False)
        layout = QVBoxLayout(self)
        layout.addWidget(QLabel(_("What happened"), self))
        layout.addWidget(self.decisions, 3)
        layout.addWidget(QLabel(_("Attempts"), self))
        layout.addWidget(self.attempts_view, 2)

    def show_story(self, detail: RunDetail, locale: str, words: OutcomeWords) -> None:
        self.decisions.clear()
        sentences = detail.decisions or [detail.row.reason]
        self.decisions.addItems(sentences)
        day = detail.row.planned_utc
        self.attempts.set_rows([self._attempt(a, day, locale, words) for a in detail.attempts])

    def _attempt(
        self, attempt: AttemptLine, day: datetime, locale: str, words: OutcomeWords
    ) -> Row:
        """One attempt; its times of day, with a date when not on the planned moment's day."""
        timeout = attempt.timeout_seconds
        message = queries.reason_text(attempt.message) if attempt.message else ""
        limit = _("none") if timeout is None else run_times.length(timeout, locale)
        cells = [str(attempt.number), run_times.clock(attempt.started_at, locale, day),
                 run_times.clock(attempt.exited_at, locale, attempt.started_at),
                 words.exit_text(attempt.exit_code, attempt.exit_signal),
                 queries.failure_text(attempt.failure_class) if attempt.failure_class else "—",
                 limit, message]  # fmt: skip
        return Row(cells, tooltip=message or None)
