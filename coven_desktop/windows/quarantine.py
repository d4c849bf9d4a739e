"""The Quarantine window: routines the circuit breaker (or a person) stopped, with why — the
failures, their classes and messages, and when — and Release, Probe once, Edit
(DESIGN §6, §12; issues #8, #21).

What an action did is said above the list, and never goes stale: a probe's line follows its
run until it ends (and then says how), and a line about one routine clears when the person
picks another."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, TypeVar

from PySide6.QtCore import Qt
from PySide6.QtGui import QFontDatabase, QTextOption
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QSplitter,
    QVBoxLayout,
    QWidget,
)

from coven_core import queries
from coven_core.engine import Engine
from coven_core.errors import CovenError
from coven_core.operator import RunRef
from coven_core.queries import (
    N_,
    Failure,
    HistoryRow,
    Quarantined,
    _,
    history,
    ngettext,
    quarantined,
)
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
from coven_desktop.windows.tones import Tones

if TYPE_CHECKING:
    from coven_desktop.desktop import Desktop

T = TypeVar("T")
#: How far back in a routine's history its probe is looked for (it is among the newest).
PROBE_LOOKBACK = 20


#: How a probe ended, in words ("The probe … ended {outcome}").
_DISPOSITIONS = {
    "succeeded": N_("succeeded"),
    "failed": N_("failed"),
    "timed_out": N_("timed out"),
    "cancelled": N_("cancelled"),
    "skipped": N_("skipped"),
    "recovery_required": N_("awaiting your decision"),
    "reconciled": N_("decided by a person"),
}


@dataclass(frozen=True)
class Said:
    """The line above the list: what an action on ``routine`` did; ``probe`` while a probe
    it started has not ended (the line follows it)."""

    routine: str
    probe: str | None = None


class Page(LivePage):
    def __init__(self, desktop: Desktop, parent: QWidget | None = None) -> None:
        super().__init__(desktop, parent)
        self.routines: list[Quarantined] = []
        self.shown: Quarantined | None = None
        self.said: Said | None = None
        self._choosing = False  # the page itself selects a row: not the person moving on
        layout = QVBoxLayout(self)
        self.headline = QLabel(self)
        self.headline.setWordWrap(True)
        self.result = QLabel(self)
        self.result.setWordWrap(True)
        self.result.hide()
        layout.addWidget(self.headline)
        layout.addWidget(self.result)
        self.tones = Tones(self)
        # page-wide: the routine may be gone once refused
        self.error = error_label(self, self.tones)
        layout.addWidget(self.error)
        splitter = QSplitter(self)
        self.routine_model = RowsModel([_("Routine"), _("Quarantined")], self)
        self.routine_view = table(self.routine_model, splitter, stretch=0)
        self.routine_view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.routine_view.setAccessibleName(_("Routines in quarantine"))
        self.routine_view.selectionModel().currentRowChanged.connect(
            lambda current, _previous: self._picked(current.row())
        )
        splitter.addWidget(self.routine_view)
        splitter.addWidget(self._detail(splitter))
        splitter.setSizes([240, 870])
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
        self.failure_model = RowsModel([_("Planned for"), _("Outcome"), _("What it said")], self)
        self.failure_view = table(self.failure_model, detail, stretch=2)
        self.failure_view.setAccessibleName(_("The routine's latest failures"))
        self.failure_view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.failure_view.selectionModel().currentRowChanged.connect(
            lambda current, _previous: self._show_failure(current.row())
        )
        layout.addWidget(self.why)
        layout.addWidget(self.failure_view, 1)
        layout.addWidget(self._failure_details(detail))
        layout.addLayout(self._buttons(detail))
        self.detail = detail
        return detail

    def _failure_details(self, parent: QWidget) -> QPlainTextEdit:
        """The chosen failure whole: a table row holds one elided line of it."""
        details = QPlainTextEdit(parent)
        details.setReadOnly(True)
        details.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        details.setWordWrapMode(QTextOption.WrapMode.WrapAtWordBoundaryOrAnywhere)
        details.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        details.setAccessibleName(_("The chosen failure's details"))
        details.setMaximumHeight(details.fontMetrics().lineSpacing() * 6 + 12)
        self.failure_details = details
        return details

    def _buttons(self, parent: QWidget) -> QHBoxLayout:
        self.release_button = QPushButton(_("Release"), parent)
        self.release_button.setToolTip(_("Plan again from now; the failure count resets"))
        self.probe_button = QPushButton(_("Probe once"), parent)
        self.probe_button.setToolTip(_("One attempt now; it stays quarantined"))
        self.edit_button = QPushButton(_("Edit…"), parent)
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
        if self.said is not None and self.said.probe is not None:
            await self._follow_probe(self.said.routine, self.said.probe)

    def _show_routines(self, found: list[Quarantined]) -> None:
        previous = self.shown.name if self.shown else None
        self.routines = found
        now = self.desktop.clock.now_utc()
        self.routine_model.set_rows(
            [Row([q.name, self._since(q, now)], tooltip=self._routine_tip(q)) for q in found]
        )
        self.splitter.setVisible(bool(found))
        keep = next((n for n, q in enumerate(found) if q.name == previous), 0)
        self._choosing = True
        try:
            if found:
                self.routine_view.selectRow(keep)
        finally:
            self._choosing = False
        self._select(keep if found else -1)
        if found:
            self.headline.setText(
                ngettext(
                    "{count} routine in quarantine: it failed too often in a row, so Coven "
                    "stopped planning it. Look at why, fix the cause, then release it.",
                    "{count} routines in quarantine: each failed too often in a row, so Coven "
                    "stopped planning it. Look at why, fix the cause, then release it.",
                    len(found),
                ).format(count=len(found))
            )
        else:
            self.headline.setText(_("No routine is in quarantine."))

    def _routine_tip(self, routine: Quarantined) -> str:
        failures = routine.consecutive_failures
        count = ngettext("{count} failure in a row", "{count} failures in a row", failures).format(
            count=failures
        )
        reason = queries.reason_text(routine.reason) if routine.reason else None
        return "\n".join(part for part in (reason, count) if part)

    def _since(self, routine: Quarantined, now: datetime) -> str:
        if abs((now - routine.since).total_seconds()) < 60:
            return _("just now")  # not "in 0 seconds"
        return relative(routine.since, now, self.locale_name)

    def _picked(self, row: int) -> None:
        """A row chosen by the person: a line about another routine is done with."""
        if self._choosing:
            return
        chosen = self.routines[row] if 0 <= row < len(self.routines) else None
        if chosen is not None and self.said is not None and self.said.routine != chosen.name:
            self._say(None)
        self._show(chosen)

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
            _(
                "<b>{routine}</b> has been in quarantine since {since}: {reason}. It plans nothing "
                "until you release it. Its latest failures:"
            ).format(
                routine=routine.name,
                since=moment(routine.since, self.locale_name),
                reason=queries.reason_text(routine.reason)
                if routine.reason
                else _("no reason given"),
            )
        )
        self.failure_model.set_rows([self._failure_row(f) for f in routine.failures])
        if routine.failures:
            self.failure_view.selectRow(0)
        self._show_failure(0 if routine.failures else -1)

    def _failure_row(self, failure: Failure) -> Row:
        message = queries.reason_text(failure.message) if failure.message else None
        said = [part for part in (message, _last_line(failure.output)) if part]
        return Row(
            [
                moment(failure.scheduled_utc, self.locale_name, seconds=False),
                self._outcome(failure),
                " — ".join(said),
            ],
            tooltip=self._failure_text(failure),
        )

    def _outcome(self, failure: Failure) -> str:
        words = {"failed": _("failed"), "timed_out": _("timed out")}
        outcome = words.get(failure.disposition, failure.disposition)
        if failure.failure_class in (None, "", *_SAID_BY_THE_OUTCOME):
            return outcome  # "failed (command failed)" said nothing more
        return f"{outcome} ({queries.failure_text(failure.failure_class)})"

    def _show_failure(self, row: int) -> None:
        failures = self.shown.failures if self.shown else []
        shown = failures[row] if 0 <= row < len(failures) else None
        self.failure_details.setVisible(shown is not None)
        self.failure_details.setPlainText(self._failure_text(shown) if shown else "")

    def _failure_text(self, failure: Failure) -> str:
        ended = ngettext(
            "Ended {when}: {outcome}, after {count} attempt.",
            "Ended {when}: {outcome}, after {count} attempts.",
            failure.attempts,
        )
        when = moment(failure.settled_at, self.locale_name)
        lines = [ended.format(when=when, outcome=self._outcome(failure), count=failure.attempts)]
        message = queries.reason_text(failure.message) if failure.message else None
        return "\n".join(lines + [part for part in (message, failure.output) if part])

    # -- acting -----------------------------------------------------------------------------
    def release(self) -> None:
        if self.shown is not None:
            self.spawn(self._release(self.shown.name))

    async def _release(self, name: str) -> None:
        skipped = await self._operate(lambda engine: engine.operator.release(name))
        if skipped is not None:
            text = ngettext(
                "Released {routine}: it plans again from now; {count} moment that "
                "passed in quarantine was recorded as skipped.",
                "Released {routine}: it plans again from now; {count} moments that "
                "passed in quarantine were recorded as skipped.",
                skipped,
            )
            self._say(Said(name), text.format(routine=name, count=skipped))

    def probe(self) -> None:
        if self.shown is not None:
            self.spawn(self._probe(self.shown.name))

    async def _probe(self, name: str) -> None:
        ref = await self._operate(lambda engine: engine.operator.probe(name))
        if isinstance(ref, RunRef):
            text = _(
                "Probing {routine}: run {run} tries once now; the routine stays "
                "in quarantine until you release it."
            )
            self._say(Said(name, ref.run_id), text.format(routine=name, run=ref.run_id))
            await self._follow_probe(name, ref.run_id)  # it may have ended already

    async def _follow_probe(self, name: str, run_id: str) -> None:
        """Once the probe's run has ended, the line says how (and follows it no more)."""
        try:
            _view, rows = await self.desktop.service.call(
                lambda engine: history(engine.store, name, PROBE_LOOKBACK)
            )
        except CovenError:  # the routine is gone: so is what the line was about
            self._say(None)
            return
        row = next((row for row in rows if row.run_id == run_id), None)
        if self.said != Said(name, run_id):
            return  # the person moved on meanwhile
        if row is None or row.disposition is None:
            return  # still waiting or running: "tries once now" is still true
        self._say(Said(name), self._probe_ended(name, row))

    def _probe_ended(self, name: str, row: HistoryRow) -> str:
        if row.disposition == "succeeded":
            text = _(
                "The probe of {routine} (run {run}) succeeded. It stays in quarantine: "
                "release it when you trust it again."
            )
        elif row.disposition in ("failed", "timed_out"):
            text = _(
                "The probe of {routine} (run {run}) failed: {reason}. It stays in quarantine; "
                "its failure is listed below."
            )
        else:
            text = _("The probe of {routine} (run {run}) ended {outcome}: {reason}.")
        reason = queries.reason_text(row.reason) if row.reason else "—"
        outcome = _DISPOSITIONS.get(row.disposition or "", row.disposition or "—")
        outcome = _(outcome)
        return text.format(routine=name, run=row.run_id, outcome=outcome, reason=reason)

    async def _operate(self, work: Callable[[Engine], T]) -> T | None:
        """The operator call, then the list as it is now; a refusal is shown above it."""
        done = await act(self.desktop, work)
        await self.reload()
        show_error(self.error, done.refusal)
        if not done.ok:
            self._say(None)  # the refusal is the news now
        return done.result if done.ok else None

    def edit(self) -> None:
        """Open the routine, as stored, in the Routines window's editor."""
        if self.shown is None:
            return
        page = self.desktop.window.show_page("routines")
        edit_routine = getattr(page, "edit_routine", None)  # None: no engine, no page
        if callable(edit_routine):
            edit_routine(self.shown.name)

    def _say(self, said: Said | None, text: str = "") -> None:
        self.said = said
        self.result.setText(text if said else "")
        self.result.setVisible(said is not None)


#: The failure classes whose words only repeat the outcome beside them.
_SAID_BY_THE_OUTCOME = ("action_failed", "timed_out")


def _last_line(output: str) -> str:
    return output.splitlines()[-1] if output.strip() else ""
