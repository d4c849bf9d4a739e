"""The evidence of one run awaiting a person, as the Needs attention page shows it (DESIGN §5,
§8): its attempts (with a details pane), its processes, its output, the runner's journal, and
what Coven tried — in sentences.

Columns are few and elided; what does not fit a cell is in the details pane and the cell's
tooltip, never in a wider table (the page fits 1000×700 without scrolling sideways).
"""

from __future__ import annotations

import json
from html import escape

from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QLabel,
    QPlainTextEdit,
    QSplitter,
    QTableView,
    QTabWidget,
    QWidget,
)

from coven_core import queries
from coven_core.queries import N_, AttemptEvidence, Item, _
from coven_desktop.windows.common import Row, RowsModel, moment, moment_text, table
from coven_desktop.windows.tones import Tone, Tones


class Evidence(QTabWidget):
    """Tabs over one item's evidence; :meth:`show_item` fills them (None empties them)."""

    def __init__(self, locale: str, tones: Tones, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.locale_name = locale
        self.tones = tones
        self.item: Item | None = None
        self._models()
        self.addTab(self._attempts_tab(), _("Attempts"))
        self.processes_view = self._table(self.process_model, _("Processes"), stretch=5)
        self.addTab(self.processes_view, _("Processes"))
        self.addTab(self._output_tab(), _("Output"))
        journal = self._table(self.journal_model, _("The runner's journal"), stretch=3)
        self.addTab(journal, _("Journal"))
        tried = self._table(self.tried_model, _("What Coven tried"), stretch=0)
        self.addTab(tried, _("What Coven tried"))

    # -- building ---------------------------------------------------------------------------
    def _models(self) -> None:
        self.attempt_model = RowsModel([_("#"), _("State"), _("Failure"), _("Started"),
                                        _("Ended")], self)  # fmt: skip
        self.process_model = RowsModel([_("Attempt"), _("Process"), _("PID"), _("Started"),
                                        _("Running now"), _("Command line")], self)  # fmt: skip
        self.journal_model = RowsModel([_("Attempt"), _("Time"), _("Record"), _("Details")],
                                       self)  # fmt: skip
        self.tried_model = RowsModel([_("What Coven did, oldest first")], self)

    def _table(self, model: RowsModel, name: str, *, stretch: int) -> QTableView:
        view = table(model, self, stretch=stretch, wrap=model is not self.process_model)
        view.setTextElideMode(Qt.TextElideMode.ElideRight)
        view.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        view.setAccessibleName(name)
        return view

    def _attempts_tab(self) -> QWidget:
        """The attempts, one line each, over the chosen one's details."""
        split = QSplitter(Qt.Orientation.Vertical, self)
        self.attempts_view = self._table(self.attempt_model, _("Attempts"), stretch=2)
        self.attempts_view.setWordWrap(False)
        self.attempts_view.selectionModel().currentRowChanged.connect(
            lambda current, _previous: self._show_attempt(current)
        )
        self.attempt_details = QLabel(split)
        self.attempt_details.setWordWrap(True)
        self.attempt_details.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.attempt_details.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        self.attempt_details.setAccessibleName(_("The chosen attempt's details"))
        split.addWidget(self.attempts_view)
        split.addWidget(self.attempt_details)
        split.setSizes([80, 120])
        split.setChildrenCollapsible(False)
        return split

    def _output_tab(self) -> QPlainTextEdit:
        self.output = QPlainTextEdit(self)
        self.output.setReadOnly(True)
        self.output.setLineWrapMode(QPlainTextEdit.LineWrapMode.WidgetWidth)
        self.output.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.output.setAccessibleName(_("The end of the run's output"))
        return self.output

    # -- showing ----------------------------------------------------------------------------
    def show_item(self, item: Item | None) -> None:
        self.item = item
        attempts = item.attempts if item else []
        self.attempt_model.set_rows([self._attempt_row(a) for a in attempts])
        self.process_model.set_rows([row for a in attempts for row in self._processes(a)])
        self.journal_model.set_rows([row for a in attempts for row in self._journal(a)])
        self.tried_model.set_rows([Row([words]) for words in (item.tried_words if item else [])])
        self.output.setPlainText(self._output(item) if item else "")
        if attempts:
            self.attempts_view.selectRow(len(attempts) - 1)  # the last attempt says most
        self._show_attempt(self.attempts_view.currentIndex())

    def _attempt_row(self, attempt: AttemptEvidence) -> Row:
        return Row(
            [
                str(attempt.number),
                _attempt_state(attempt.state),
                _failure(attempt),
                moment_text(attempt.started_at, self.locale_name),
                self._ended(attempt),
            ],
            tooltip=_failure(attempt) or None,
        )

    def _show_attempt(self, index: QModelIndex) -> None:
        attempts = self.item.attempts if self.item else []
        row = index.row() if index.isValid() else -1
        if not 0 <= row < len(attempts):
            self.attempt_details.setText("")
            return
        self.attempt_details.setText(self._attempt_details(attempts[row]))

    def _ended(self, attempt: AttemptEvidence) -> str:
        """When it ended; with no exit recorded, that none was (when Coven settled it is in
        the attempt's details: it is not when the command ended, which may have run on)."""
        if attempt.settled_without_exit:
            return _("no exit recorded")
        return moment_text(attempt.exited_at, self.locale_name)

    def _times(self, attempt: AttemptEvidence) -> str:
        locale = self.locale_name
        claimed = moment_text(attempt.claimed_at, locale)
        started = moment_text(attempt.started_at, locale)
        if not attempt.settled_without_exit:
            return _("Claimed {claimed} · started {started} · ended {ended}").format(
                claimed=claimed, started=started, ended=moment_text(attempt.exited_at, locale)
            )
        return _(
            "Claimed {claimed} · started {started} · no exit recorded (settled {time})"
        ).format(claimed=claimed, started=started, time=moment_text(attempt.exited_at, locale))

    def _attempt_details(self, attempt: AttemptEvidence) -> str:
        locale = self.locale_name
        lines = [
            _("<b>Attempt {number}</b> · {state}").format(
                number=attempt.number, state=escape(_attempt_state(attempt.state))
            ),
            escape(_failure(attempt)) or _("No failure recorded."),
            self._times(attempt),
        ]
        if attempt.cancel_requested_at:
            lines.append(
                _("A stop was asked for at {at}.").format(
                    at=moment_text(attempt.cancel_requested_at, locale)
                )
            )
        return "<br>".join(line for line in lines if line)

    def _processes(self, attempt: AttemptEvidence) -> list[Row]:
        roles = {"runner": _("Coven's runner"), "command": _("the command")}
        warning = self.tones.colour(Tone.WARNING).name()
        return [
            Row(
                [
                    str(attempt.number),
                    roles[fact.role],
                    str(fact.pid or "—"),
                    moment(fact.started_at, self.locale_name),
                    _("yes, still running") if fact.alive else _("no"),
                    (attempt.command_line or "—") if fact.role == "command" else "—",
                ],
                tooltip=attempt.command_line if fact.role == "command" else None,
                colour=warning if fact.alive else None,  # amber: a live process blocks
            )
            for fact in attempt.processes()
        ]

    def _journal(self, attempt: AttemptEvidence) -> list[Row]:
        rows = []
        for record in attempt.journal:
            details = {k: v for k, v in record.items() if k not in ("event", "at")}
            at = record.get("at")
            when = moment_text(at if isinstance(at, str) else None, self.locale_name)
            event = str(record.get("event", "?"))
            rows.append(Row([str(attempt.number), when, event, _compact(details)]))
        error = self.tones.colour(Tone.ERROR).name()
        rows += [
            Row([str(attempt.number), "—", _("problem"), problem], colour=error)
            for problem in attempt.journal_problems
        ]
        return rows

    def _output(self, item: Item) -> str:
        with_output = [a for a in item.attempts if a.stdout_tail or a.stderr_tail]
        if not with_output:
            return _("(no output was captured)")
        last = with_output[-1]
        parts = []
        for name, tail in (("stdout", last.stdout_tail), ("stderr", last.stderr_tail)):
            if tail:
                header = _("— the end of {stream} (attempt {number}) —")
                parts.append(header.format(stream=name, number=last.number) + "\n" + tail)
        return "\n".join(parts)


#: An attempt's state (model.AttemptState) in words.
_ATTEMPT_STATES = {
    "claimed": N_("claimed"),
    "dispatching": N_("starting"),
    "running": N_("running"),
    "exited": N_("exited"),
    "settled": N_("settled"),
}


def _attempt_state(state: str) -> str:
    return _(_ATTEMPT_STATES[state]) if state in _ATTEMPT_STATES else state


def _failure(attempt: AttemptEvidence) -> str:
    """ "ambiguous: the runner is gone and its journal shows no outcome", in the app's words."""
    parts = [part for part in (attempt.failure_class, attempt.message) if part]
    if len(parts) == 2 and parts[1].startswith(parts[0]):
        parts = parts[1:]  # the message already names its class
    return queries.reason_text(": ".join(parts))


def _compact(details: dict[str, object]) -> str:
    return ", ".join(f"{key}={json.dumps(value, default=str)}" for key, value in details.items())
