"""The DST explanation window: for a routine or one occurrence, the local time, UTC, offset,
zone and tz database version, one plain sentence of what happened and why, the zone's changes
in the next year and what they do to the routine; for an occurrence also the inspection (its
attempts, delivery and decisions). Esc closes it. Its body (:class:`ExplanationPanel`) is also
the run detail's Time zone tab (:mod:`.run_detail`).

The text comes from the engine (:mod:`coven_core.views.explain`), read on the operator thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QFormLayout,
    QLabel,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)
from shiboken6 import isValid

from coven_core.engine import Engine
from coven_core.errors import CovenError
from coven_core.queries import (
    MomentFacts,
    OccurrenceExplanation,
    RoutineExplanation,
    _,
    explain_occurrence,
    explain_routine,
)
from coven_desktop.tasks import Tasks

if TYPE_CHECKING:
    from coven_desktop.desktop import Desktop


def open_explanation(
    desktop: Desktop, routine: str, occurrence_id: str | None = None, parent: QWidget | None = None
) -> QWidget:
    """Open a non-modal explanation window for ``routine`` (or one of its occurrences) and
    start loading it; ``await window.reload()`` to load again, ``window.loaded`` says when.

    The window is its own top-level window but always has a Qt parent (the main window when
    none is given) and is deleted when closed: Qt owns it, so it is never freed by Python's
    garbage collector on the engine's threads.
    """
    window = ExplanationWindow(desktop, routine, occurrence_id, parent or desktop.window)
    window.show()
    window.start_loading()
    return window


@dataclass(frozen=True)
class Explained:
    routine: RoutineExplanation
    occurrence: OccurrenceExplanation | None


def read_explanation(
    engine: Engine, routine: str, occurrence_id: str | None, now: datetime, locale: str
) -> Explained:
    """The routine's explanation and, given one, an occurrence's (on the operator thread)."""
    about = explain_routine(engine.store, routine, now, locale)
    one = None if occurrence_id is None else explain_occurrence(engine.store, occurrence_id, locale)
    return Explained(about, one)


class ExplanationPanel(QWidget):
    """What the explanation says, laid out; the run detail's Time zone tab is one, without
    the details (the inspection: the run detail tells that story in sentences)."""

    def __init__(self, parent: QWidget, *, details: bool = True) -> None:
        super().__init__(parent)
        self.heading = QLabel(self)
        self.sentence = _wrapped(self)
        self.outcome = _wrapped(self)
        self.facts = QFormLayout()
        self.changes = _wrapped(self)
        self.details = QTreeWidget(self)
        self.details.setHeaderLabels([_("Field"), _("Value")])
        self.details.setAccessibleName(_("Details"))
        self._layout(details)

    def _layout(self, details: bool) -> None:
        layout = QVBoxLayout(self)
        self.heading.setTextFormat(Qt.TextFormat.PlainText)
        bold = self.heading.font()
        bold.setBold(True)
        self.heading.setFont(bold)
        for widget in (self.heading, self.sentence, self.outcome):
            layout.addWidget(widget)
        layout.addLayout(self.facts)
        changes = QLabel(_("Time-zone changes in the next year"), self)
        changes.setFont(bold)
        layout.addWidget(changes)
        layout.addWidget(self.changes)
        title = QLabel(_("Details"), self)
        title.setFont(bold)
        layout.addWidget(title)
        layout.addWidget(self.details, 1)
        if not details:
            title.hide()
            self.details.hide()
            layout.addStretch(1)

    def show_failure(self, message: str) -> None:
        self.sentence.setText(message)

    def show_result(self, result: Explained) -> None:
        about, one = result.routine, result.occurrence
        facts = one.facts if one is not None else about.next_run
        if one is not None:
            self.heading.setText(_("{routine}: one occurrence").format(routine=about.routine))
            self.outcome.setText(one.outcome)
        else:
            self.heading.setText(about.routine)
            self.outcome.setText(about.verdict)
        self.sentence.setText(facts.sentence if facts is not None else "")
        self._show_facts(facts, about)
        self.changes.setText("\n".join(t.sentence for t in about.transitions)
                             or _("None: this zone keeps one offset all year."))  # fmt: skip
        if self.details.isVisibleTo(self):
            self._show_details(one, about)

    def _show_facts(self, facts: MomentFacts | None, about: RoutineExplanation) -> None:
        while self.facts.rowCount():
            self.facts.removeRow(0)
        rows = [(_("Zone"), f"{about.zone_place} ({about.zone})"),
                (_("Time-zone database"), about.tzdb_version)]  # fmt: skip
        if facts is not None:
            rows = [(_("Local time"), facts.local), (_("UTC"), facts.utc),
                    (_("Offset"), f"{facts.offset} ({facts.zone_name})"),
                    (_("Zone"), f"{about.zone_place} ({facts.zone})"),
                    (_("Time-zone database"), facts.tzdb_version)]  # fmt: skip
        for label, value in rows:
            field = QLabel(value, self)
            field.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            self.facts.addRow(label, field)

    def _show_details(self, one: OccurrenceExplanation | None, about: RoutineExplanation) -> None:
        self.details.clear()
        if one is not None:
            self.details.setHeaderLabels([_("Field"), _("Value")])
            for key, value in one.inspection.items():
                self.details.addTopLevelItem(_tree_item(key, value))
        else:
            self.details.setHeaderLabels([_("Next occurrences"), _("What happens")])
            for moment in about.upcoming:
                self.details.addTopLevelItem(QTreeWidgetItem([moment.local, moment.sentence]))
        self.details.expandToDepth(0)
        self.details.resizeColumnToContents(0)


class ExplanationWindow(QWidget):
    loaded = Signal()
    failed = Signal(str)

    def __init__(
        self, desktop: Desktop, routine: str, occurrence_id: str | None, parent: QWidget
    ) -> None:
        super().__init__(parent, Qt.WindowType.Window)  # its own window, never modal
        self.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        self.desktop, self.routine, self.occurrence_id = desktop, routine, occurrence_id
        self.setWindowTitle(_("Explanation: {routine}").format(routine=routine))
        self.resize(620, 520)
        self.panel = ExplanationPanel(self)
        panel = self.panel
        self.heading, self.sentence, self.outcome = panel.heading, panel.sentence, panel.outcome
        self.facts, self.changes, self.details = panel.facts, panel.changes, panel.details
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(panel)
        closing = QShortcut(QKeySequence(Qt.Key.Key_Escape), self)  # a secondary window
        closing.activated.connect(self.close)
        self._tasks = Tasks()
        self.result: Explained | None = None

    def start_loading(self) -> None:
        self._tasks.spawn(self.reload())

    async def settle(self) -> None:
        """Wait for the loading in flight (tests, the demo renderer)."""
        await self._tasks.settle()

    async def reload(self) -> None:
        routine, oid = self.routine, self.occurrence_id
        locale, now = self.desktop.locale, self.desktop.clock.now_utc()
        try:
            result = await self.desktop.service.call(
                lambda engine: read_explanation(engine, routine, oid, now, locale)
            )
        except CovenError as error:
            if isValid(self):
                self.panel.show_failure(str(error))
                self.failed.emit(str(error))
            return
        if not isValid(self):
            return  # closed (and deleted) while it was reading
        self.result = result
        self.panel.show_result(result)
        self.loaded.emit()


def _wrapped(parent: QWidget) -> QLabel:
    label = QLabel(parent)
    label.setWordWrap(True)
    label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
    return label


def _tree_item(key: str, value: Any) -> QTreeWidgetItem:
    """The inspection as a tree: dicts and lists open up, values are shown as text."""
    if isinstance(value, dict):
        item = QTreeWidgetItem([key, ""])
        item.addChildren([_tree_item(str(k), v) for k, v in value.items()])
        return item
    if isinstance(value, list):
        item = QTreeWidgetItem([key, str(len(value))])
        item.addChildren([_tree_item(f"{key} {n}", v) for n, v in enumerate(value, 1)])
        return item
    return QTreeWidgetItem([key, "" if value is None else str(value)])
