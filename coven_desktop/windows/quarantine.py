"""The Quarantine window: routines the circuit breaker (or a person) stopped, with why — the
failures, their classes and messages, and when — and Release, Probe once, Edit
(DESIGN §6, §12; issue #8)."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from coven_core.engine import Engine
from coven_core.operator import RunRef
from coven_core.queries import Failure, Quarantined, quarantined
from coven_desktop.windows.common import (
    LivePage,
    Row,
    RowsModel,
    act,
    error_label,
    moment,
    relative,
    show_error,
    table,
)

if TYPE_CHECKING:
    from coven_desktop.desktop import Desktop

T = TypeVar("T")


class Page(LivePage):
    def __init__(self, desktop: Desktop, parent: QWidget | None = None) -> None:
        super().__init__(desktop, parent)
        self.routines: list[Quarantined] = []
        self.shown: Quarantined | None = None
        layout = QVBoxLayout(self)
        self.headline = QLabel(self)
        self.headline.setWordWrap(True)
        self.result = QLabel(self)
        self.result.setWordWrap(True)
        self.result.hide()
        layout.addWidget(self.headline)
        layout.addWidget(self.result)
        self.error = error_label(self)  # page-wide: the routine may be gone once refused
        layout.addWidget(self.error)
        splitter = QSplitter(self)
        self.routine_model = RowsModel(
            [self.tr("Routine"), self.tr("Quarantined"), self.tr("Failures in a row")], self
        )
        self.routine_view = table(self.routine_model, splitter, stretch=0)
        self.routine_view.selectionModel().currentRowChanged.connect(
            lambda current, _previous: self._select(current.row())
        )
        splitter.addWidget(self.routine_view)
        splitter.addWidget(self._detail(splitter))
        splitter.setSizes([280, 870])
        splitter.setStretchFactor(1, 1)
        layout.addWidget(splitter, 1)
        self.splitter = splitter
        layout.addStretch(0)
        self._show(None)

    def _detail(self, parent: QWidget) -> QWidget:
        detail = QWidget(parent)
        layout = QVBoxLayout(detail)
        layout.setContentsMargins(0, 0, 0, 0)
        self.why = QLabel(detail)
        self.why.setWordWrap(True)
        self.failure_model = RowsModel(
            [
                self.tr("Planned for"),
                self.tr("Outcome"),
                self.tr("Class"),
                self.tr("Message"),
                self.tr("It said last"),
            ],
            self,
        )
        self.failure_view = table(self.failure_model, detail, stretch=4, wrap=True)
        layout.addWidget(self.why)
        layout.addWidget(self.failure_view, 1)
        layout.addLayout(self._buttons(detail))
        self.detail = detail
        return detail

    def _buttons(self, parent: QWidget) -> QHBoxLayout:
        self.release_button = QPushButton(self.tr("Release"), parent)
        self.release_button.setToolTip(self.tr("Plan again from now; the failure count resets"))
        self.probe_button = QPushButton(self.tr("Probe once"), parent)
        self.probe_button.setToolTip(self.tr("One attempt now; it stays quarantined"))
        self.edit_button = QPushButton(self.tr("Edit…"), parent)
        self.release_button.clicked.connect(self.release)
        self.probe_button.clicked.connect(self.probe)
        self.edit_button.clicked.connect(self.edit)
        buttons = QHBoxLayout()
        for button in (self.release_button, self.probe_button, self.edit_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        return buttons

    # -- loading ----------------------------------------------------------------------------
    async def reload(self) -> None:
        found = await self.desktop.service.call(lambda engine: quarantined(engine.store))
        self._show_routines(found)

    def _show_routines(self, found: list[Quarantined]) -> None:
        previous = self.shown.name if self.shown else None
        self.routines = found
        now = self.desktop.clock.now_utc()
        self.routine_model.set_rows(
            [
                Row(
                    [q.name, relative(q.since, now, self.locale_name), str(q.consecutive_failures)],
                    tooltip=q.reason,
                )
                for q in found
            ]
        )
        self.splitter.setVisible(bool(found))
        keep = next((n for n, q in enumerate(found) if q.name == previous), 0)
        if found:
            self.routine_view.selectRow(keep)
        self._select(keep if found else -1)
        if found:
            self.headline.setText(
                self.tr(
                    "%n routine(s) in quarantine: each failed too often in a row, so Coven stopped "
                    "planning it. Look at why, fix the cause, then release it.",
                    "",
                    len(found),
                )
            )
        else:
            self.headline.setText(self.tr("No routine is in quarantine."))

    def _select(self, row: int) -> None:
        self._show(self.routines[row] if 0 <= row < len(self.routines) else None)

    def _show(self, routine: Quarantined | None) -> None:
        if routine is not None and self.shown is not None and routine.name != self.shown.name:
            show_error(self.error, None)  # another routine: the refusal was about the last one
        self.shown = routine
        self.detail.setVisible(routine is not None)
        if routine is None:
            self.failure_model.set_rows([])
            return
        self.why.setText(
            self.tr(
                "<b>{routine}</b> has been in quarantine since {since}: {reason}. It plans nothing "
                "until you release it. Its latest failures:"
            ).format(
                routine=routine.name,
                since=moment(routine.since, self.locale_name),
                reason=routine.reason or self.tr("no reason given"),
            )
        )
        self.failure_model.set_rows([self._failure_row(f) for f in routine.failures])

    def _failure_row(self, failure: Failure) -> Row:
        outcome = {"failed": self.tr("failed"), "timed_out": self.tr("timed out")}
        return Row(
            [
                moment(failure.scheduled_utc, self.locale_name, seconds=False),
                outcome.get(failure.disposition, failure.disposition),
                failure.failure_class or "—",
                failure.message or "",
                failure.output.splitlines()[-1] if failure.output else "",
            ],
            tooltip=self.tr("Ended {when}").format(
                when=moment(failure.settled_at, self.locale_name)
            )
            + "".join(f"\n{part}" for part in (failure.message, failure.output) if part),
        )

    # -- acting -----------------------------------------------------------------------------
    def release(self) -> None:
        if self.shown is not None:
            self.spawn(self._release(self.shown.name))

    async def _release(self, name: str) -> None:
        skipped = await self._operate(lambda engine: engine.operator.release(name))
        if skipped is not None:
            self._say(
                self.tr(
                    "Released {routine}: it plans again from now; %n moment(s) that "
                    "passed in quarantine were recorded as skipped.",
                    "",
                    skipped,
                ).format(routine=name)
            )

    def probe(self) -> None:
        if self.shown is not None:
            self.spawn(self._probe(self.shown.name))

    async def _probe(self, name: str) -> None:
        ref = await self._operate(lambda engine: engine.operator.probe(name))
        if isinstance(ref, RunRef):
            self._say(
                self.tr(
                    "Probing {routine}: run {run} tries once now; the routine stays "
                    "in quarantine until you release it."
                ).format(routine=name, run=ref.run_id)
            )

    async def _operate(self, work: Callable[[Engine], T]) -> T | None:
        """The operator call, then the list as it is now; a refusal is shown above it."""
        done = await act(self.desktop, work)
        await self.reload()
        show_error(self.error, done.refusal)
        return done.result if done.ok else None

    def edit(self) -> None:
        """Open the routine in the Routines window's editor (when that window has one)."""
        if self.shown is None:
            return
        name = self.shown.name
        page = self.desktop.window.show_page("routines")
        open_editor = getattr(page, "open_editor", None)
        if callable(open_editor):
            open_editor(name=name)

    def _say(self, text: str) -> None:
        self.result.setText(text)
        self.result.show()
