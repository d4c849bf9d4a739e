"""Add or edit a routine: an inline form with a live preview of the next moments.

While the person types, a single-shot timer (debounce) asks the engine to check the draft
(:func:`coven_core.queries.check_draft`, on the operator thread): each field shows the engine's
own
message — the one ``coven routine add`` would print — and the preview lists the next moments
with gaps (skipped: the wall time does not exist) and folds (runs at the first pass) marked.
Saving goes through the operator API; a refusal is shown in the form and nothing typed is
lost.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

import shiboken6
from babel.dates import format_datetime
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QCompleter,
    QFormLayout,
    QGroupBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from coven_core import queries
from coven_core.engine import Engine
from coven_core.errors import CovenError
from coven_core.model import MisfirePolicy, OverlapPolicy
from coven_core.queries import (
    BoundTime,
    DraftCheck,
    LocalTimeKind,
    Preview,
    RoutineDraft,
    RoutineView,
    ScheduleKind,
    _,
    check_draft,
    describe_timetable,
    format_offset,
)
from coven_desktop.tasks import Tasks

if TYPE_CHECKING:
    from coven_desktop.desktop import Desktop

#: How long typing must pause before the draft is checked again.
DEBOUNCE_MS = 250
#: The kind of each preview row (regular, nonexistent, repeated), for tests and styling.
KindRole = Qt.ItemDataRole.UserRole + 1


class RoutineEditor(QGroupBox):
    previewUpdated = Signal(object)  # the DraftCheck now shown (errors and preview)
    saved = Signal(str)  # the routine's name, once the engine has stored it
    closed = Signal()

    def __init__(self, desktop: Desktop, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.desktop = desktop
        self.editing: RoutineView | None = None
        self._generation = 0
        self._tasks = Tasks()
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(DEBOUNCE_MS)
        self._debounce.timeout.connect(self._check_soon)
        self.errors: dict[str, QLabel] = {}
        self._build()

    # -- the form ---------------------------------------------------------------------------
    def _build(self) -> None:
        layout = QVBoxLayout(self)
        form = QFormLayout()
        self._add_fields(form)
        layout.addLayout(form)
        self.words = QLabel("", self)  # the schedule in words, as the list will say it
        self.words.setObjectName("words")
        self.words.setWordWrap(True)
        layout.addWidget(self.words)
        layout.addWidget(QLabel(_("Next occurrences"), self))
        self.preview = QTreeWidget(self)
        self.preview.setAccessibleName(_("Next occurrences"))
        self.preview.setHeaderLabels([_("Local time"), _("Offset"), _("Status"), _("Note")])
        self.preview.setRootIsDecorated(False)
        layout.addWidget(self.preview, 1)
        self.status = self._error_label("form")
        layout.addWidget(self.status)
        layout.addLayout(self._buttons())

    def _add_fields(self, form: QFormLayout) -> None:
        self.name = QLineEdit(self)
        self.schedule = QLineEdit(self)
        self.schedule.setPlaceholderText(_("30 2 * * *, every 15m, rrule:FREQ=…, once …"))
        self.zone = self._zone_box()
        self.command = QLineEdit(self)
        self.command.setPlaceholderText(_("/usr/bin/rsync -a ~/docs /mnt/backup"))
        self.shell = QCheckBox(_("Run through a shell (/bin/sh -c)"), self)
        self.misfire = self._choices(
            (MisfirePolicy.LATEST_ONLY, _("Run the latest missed one, once")),
            (MisfirePolicy.SKIP_MISSED, _("Skip every missed one")),
        )
        self.grace = self._duration_edit()
        self.overlap = self._choices(
            (OverlapPolicy.SKIP, _("Skip it")),
            (OverlapPolicy.QUEUE_ONE, _("Let one wait")),
        )
        self.timeout = self._duration_edit()
        self.retries = QSpinBox(self)
        self.retries.setRange(0, 100)
        self.idempotent = QCheckBox(_("Safe to run twice (idempotent)"), self)
        rows: list[tuple[str, QWidget, str | None]] = [
            (_("Name"), self.name, "name"),
            (_("Schedule"), self.schedule, "schedule"),
            (_("Time zone"), self.zone, "timezone"),
            (_("Command"), self.command, "command"),
            ("", self.shell, None),
            (_("Missed runs"), self.misfire, None),
            (_("Grace"), self.grace, "grace"),
            (_("While still running"), self.overlap, None),
            (_("Timeout"), self.timeout, "timeout"),
            (_("Retries"), self.retries, None),
            ("", self.idempotent, None),
        ]
        for label, widget, key in rows:
            if label:  # the label names a field wrapped with its error line (no buddy)
                widget.setAccessibleName(label)
            form.addRow(label, self._with_error(widget, key))
        self._watch()

    def _with_error(self, widget: QWidget, key: str | None) -> QWidget:
        if key is None:
            return widget
        box = QWidget(self)
        column = QVBoxLayout(box)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(widget)
        column.addWidget(self._error_label(key))
        return box

    def _error_label(self, key: str) -> QLabel:
        label = QLabel(self)
        label.setObjectName(f"error:{key}")
        label.setWordWrap(True)
        label.setStyleSheet("color: #b00020")
        label.hide()
        self.errors[key] = label
        return label

    def _zone_box(self) -> QComboBox:
        box = QComboBox(self)
        box.setEditable(True)
        box.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        box.addItems(["local", "UTC", *sorted(queries.available_zones() - {"UTC"})])
        completer = QCompleter(box.model(), box)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.setFilterMode(Qt.MatchFlag.MatchContains)
        box.setCompleter(completer)
        return box

    def _choices(self, *options: tuple[str, str]) -> QComboBox:
        box = QComboBox(self)
        for value, label in options:
            box.addItem(label, value)
        return box

    def _duration_edit(self) -> QLineEdit:
        edit = QLineEdit("none", self)
        edit.setPlaceholderText(_("e.g. 90s, 15m, 2h, 1d; none: no limit"))
        return edit

    def _buttons(self) -> QHBoxLayout:
        row = QHBoxLayout()
        row.addStretch(1)
        self.cancel_button = QPushButton(_("Cancel"), self)
        self.cancel_button.clicked.connect(self.close_editor)
        self.save_button = QPushButton(_("Save"), self)
        self.save_button.setDefault(True)
        self.save_button.clicked.connect(self.save)
        row.addWidget(self.cancel_button)
        row.addWidget(self.save_button)
        return row

    def _watch(self) -> None:
        """Any change starts (or restarts) the debounce timer."""
        for edit in (self.name, self.schedule, self.command, self.grace, self.timeout):
            edit.textChanged.connect(self._changed)
        self.zone.currentTextChanged.connect(self._changed)
        for box in (self.misfire, self.overlap):
            box.currentIndexChanged.connect(self._changed)
        for check in (self.shell, self.idempotent):
            check.toggled.connect(self._changed)
        self.retries.valueChanged.connect(self._changed)

    def _changed(self, *_args: object) -> None:
        self.status.hide()  # a refusal was about what the form said before this change
        self._debounce.start()

    # -- opening and closing ----------------------------------------------------------------
    def open_for_add(self, name: str = "", schedule: str = "", command: str = "") -> None:
        self.editing = None
        self.setTitle(_("New routine"))
        self._fill(RoutineDraft(name, schedule, "local", command))
        self.name.setReadOnly(False)
        self._open()

    def open_for_edit(self, view: RoutineView) -> None:
        self.editing = view
        name = view.routine.name
        self.setTitle(_("Edit {name}").format(name=name))
        assert view.revision is not None, "a routine with no readable revision is not edited"
        self._fill(RoutineDraft.of(name, view.revision.spec))
        self.name.setReadOnly(True)  # the operator API has no rename
        self._open()

    def _open(self) -> None:
        self.status.hide()
        self.show()
        (self.schedule if self.name.text() else self.name).setFocus()
        self._debounce.start()

    def _fill(self, draft: RoutineDraft) -> None:
        self.name.setText(draft.name)
        self.schedule.setText(draft.schedule)
        self.zone.setCurrentText(draft.timezone)
        self.command.setText(draft.command)
        self.shell.setChecked(draft.shell)
        self.misfire.setCurrentIndex(self.misfire.findData(draft.misfire))
        self.grace.setText(draft.grace)
        self.overlap.setCurrentIndex(self.overlap.findData(draft.overlap))
        self.timeout.setText(draft.timeout)
        self.retries.setValue(draft.retries)
        self.idempotent.setChecked(draft.idempotent)

    def close_editor(self) -> None:
        self._debounce.stop()
        self._generation += 1  # a check still in flight is no longer shown
        self.hide()
        self.closed.emit()

    def draft(self) -> RoutineDraft:
        return RoutineDraft(
            name=self.name.text().strip(),
            schedule=self.schedule.text(),
            timezone=self.zone.currentText(),
            command=self.command.text(),
            shell=self.shell.isChecked(),
            misfire=MisfirePolicy(self.misfire.currentData()),
            grace=self.grace.text(),
            overlap=OverlapPolicy(self.overlap.currentData()),
            timeout=self.timeout.text(),
            retries=self.retries.value(),
            idempotent=self.idempotent.isChecked(),
        )

    # -- checking and the preview -----------------------------------------------------------
    def _check_soon(self) -> None:
        if self.isVisible():
            self._tasks.spawn(self.check())

    async def check(self) -> DraftCheck:
        """Check the draft on the operator thread; show the result if nothing newer came."""
        self._generation += 1
        generation = self._generation
        draft, now, anchor = self.draft(), self.desktop.clock.now_utc(), self._anchor()
        result = await self.desktop.service.call(lambda _e: check_draft(draft, now, anchor))
        if generation == self._generation and shiboken6.isValid(self):
            self._show(result, now)
            self.previewUpdated.emit(result)
        return result

    def _anchor(self) -> datetime | None:
        """The stored anchor while the schedule is the stored one (the engine keeps it then);
        otherwise now, as the operator will set it."""
        view = self.editing
        stored = None if view is None else view.revision
        if stored is not None and self.schedule.text() == stored.spec.schedule:
            return stored.anchor
        return None

    def _show(self, result: DraftCheck, now: datetime) -> None:
        for key, label in self.errors.items():
            message = result.message(key)
            if key != "form" or message:
                label.setText(message or "")
                label.setVisible(bool(message))
        self.preview.clear()
        self.words.clear()
        if result.preview is not None:
            self.words.setText(describe_timetable(result.preview.timetable, self.desktop.locale))
            self._fill_preview(result.preview)

    def _fill_preview(self, preview: Preview) -> None:
        locale = self.desktop.locale
        interval = preview.timetable.kind is ScheduleKind.INTERVAL
        for moment in preview.moments:
            wall = format_datetime(moment.local, format="medium", locale=locale)
            note = preview.note(moment, locale) or ""
            cells = [wall, "UTC" + format_offset(moment.offset), self._status(moment, interval)]
            item = QTreeWidgetItem([*cells, note])
            item.setData(0, KindRole, moment.kind.value)
            for column in range(4):
                item.setToolTip(column, note)
            if moment.skipped:
                font = item.font(0)
                font.setStrikeOut(True)
                item.setFont(0, font)
            self.preview.addTopLevelItem(item)
        if not preview.moments:
            self.preview.addTopLevelItem(QTreeWidgetItem([_("No further occurrences")]))

    def _status(self, moment: BoundTime, interval: bool) -> str:
        if moment.kind is LocalTimeKind.NONEXISTENT:
            return _("Skipped: this time does not exist")
        if moment.kind is LocalTimeKind.REPEATED and not interval:
            return _("Happens twice: runs at the first")
        if moment.kind is LocalTimeKind.REPEATED:
            return _("First pass") if moment.fold == 0 else _("Second pass")
        return _("Planned")

    # -- saving -----------------------------------------------------------------------------
    def save(self) -> None:
        self._tasks.spawn(self.submit())

    async def submit(self) -> bool:
        """Check, then add or edit through the operator API; True once it is stored."""
        self._debounce.stop()
        result = await self.check()
        if result.spec is None:
            self._say(_("Fix the problems shown above to save."))
            return False
        name, spec, editing = self.draft().name, result.spec, self.editing is not None
        work: Callable[[Engine], object] = (
            (lambda e: e.operator.edit_routine_to(name, spec))
            if editing
            else (lambda e: e.operator.add_routine(name, spec))
        )
        try:
            await self.desktop.service.call(work)
        except CovenError as refusal:
            self._say(str(refusal))  # the form keeps everything typed
            return False
        await self.desktop.service.refresh()
        await self.desktop.refresh()
        if not shiboken6.isValid(self):
            return True  # stored; the window closed meanwhile
        self.close_editor()
        self.saved.emit(name)
        return True

    def _say(self, message: str) -> None:
        self.status.setText(message)
        self.status.show()

    # -- tasks ------------------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        return bool(self._tasks)

    async def settle(self) -> None:
        """Wait for the checks and saves in flight (tests)."""
        await self._tasks.settle()
