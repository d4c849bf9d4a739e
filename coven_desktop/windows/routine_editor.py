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

import shlex
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING

import platformdirs
import shiboken6
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QFrame,
    QGroupBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QToolButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from coven_core.engine import Engine
from coven_core.errors import CovenError
from coven_core.model import MisfirePolicy, OverlapPolicy, SkipReason
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
from coven_desktop.windows.common import error_label, show_error, wall_text
from coven_desktop.windows.tones import Tone, Tones
from coven_desktop.windows.zone_box import ZoneBox

if TYPE_CHECKING:
    from coven_desktop.desktop import Desktop

#: How long typing must pause before the draft is checked again.
DEBOUNCE_MS = 250
#: The policy fields that can have a problem of their own.
_POLICY_FIELDS = ("except_dates", "max_runtime_per_day", "cooldown", "cooldown_max", "after")
#: The kind of each preview row (regular, nonexistent, repeated), for tests and styling.
KindRole = Qt.ItemDataRole.UserRole + 1


#: The preview shows at least this many moments however many fields are open.
PREVIEW_ROWS = 6
#: And no more room than its longest list takes: the engine's eight moments, "… the next
#: clock change:" and that change's moment. The rest goes to the fields.
PREVIEW_MOST_ROWS = 10


def example_command() -> str:
    """``rsync -a ~/Documents /mnt/backup`` with the folder written out (the person's own
    documents folder, in their language): a command runs without a shell unless asked,
    so nothing would expand ``~``."""
    documents = platformdirs.user_documents_dir()
    return shlex.join(["rsync", "-a", documents, "/mnt/backup"])


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
        self.tones = Tones(self)
        self._build()

    # -- the form ---------------------------------------------------------------------------
    def _build(self) -> None:
        layout = QVBoxLayout(self)
        form = QFormLayout()
        # a label goes above its field when the two do not fit side by side (German, a
        # narrow pane): the pane scrolls up and down only, so nothing is cut at the right
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapLongRows)
        self._add_fields(form)
        policies = self._policy_section()
        fields = QWidget(self)  # scrolls when the policies are open: the preview keeps its rows
        inner = QVBoxLayout(fields)
        inner.setContentsMargins(0, 0, 0, 0)
        inner.addLayout(form)
        inner.addWidget(self.policies_toggle)
        inner.addWidget(policies)
        inner.addStretch(1)
        self.fields = QScrollArea(self)
        self.fields.setWidgetResizable(True)
        self.fields.setFrameShape(QFrame.Shape.NoFrame)
        self.fields.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.fields.setWidget(fields)
        layout.addWidget(self.fields, 3)
        self.words = QLabel("", self)  # the schedule in words, as the list will say it
        self.words.setObjectName("words")
        self.words.setWordWrap(True)
        layout.addWidget(self.words)
        layout.addWidget(QLabel(_("Next occurrences"), self))
        self.preview = QTreeWidget(self)
        self.preview.setAccessibleName(_("Next occurrences"))
        self.preview.setHeaderLabels([_("Local time"), _("Offset"), _("Status")])
        self.preview.setRootIsDecorated(False)
        self.preview.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        fit = QHeaderView.ResizeMode.ResizeToContents  # the time itself is never cut
        for column in (0, 1):  # the status takes what is left
            self.preview.header().setSectionResizeMode(column, fit)
        rows = self.preview.fontMetrics().height() + 4
        self.preview.setMinimumHeight(PREVIEW_ROWS * rows)
        layout.addWidget(self.preview, 2)
        # A time-zone note is a sentence: wrapped under the list, not cut in a column of it.
        self.notes = QLabel(self)
        self.notes.setObjectName("notes")
        self.notes.setWordWrap(True)
        self.notes.setAccessibleName(_("Time-zone notes"))
        self.notes.hide()
        layout.addWidget(self.notes)
        self.status = self._error_label("form")
        layout.addWidget(self.status)
        layout.addLayout(self._buttons())

    def _add_fields(self, form: QFormLayout) -> None:
        self.name = QLineEdit(self)
        self.schedule = QLineEdit(self)
        self.schedule.setPlaceholderText(_("30 2 * * *, every 15m, rrule:FREQ=…, once …"))
        self.zone = ZoneBox(self)
        self.command = QLineEdit(self)
        self.command.setPlaceholderText(example_command())
        self.shell = QCheckBox(_("Run through a shell (/bin/sh -c)"), self)
        # Short choices, the how in each one's tooltip: the combo fits its pane (issue #22).
        self.misfire = self._choices(
            (MisfirePolicy.LATEST_ONLY, _("Run the latest once"),
             _("Of the moments missed asleep or while Coven was not running, the latest runs "
               "once (within the grace); the others are recorded as missed")),
            (MisfirePolicy.SKIP_MISSED, _("Skip every missed one"),
             _("Moments missed asleep or while Coven was not running are recorded as missed; "
               "none of them runs")),
        )  # fmt: skip
        self.grace = self._duration_edit(
            _("No limit"),
            _("How late a missed moment may still start: a duration like 15m, 2h or 1d. "
              "Empty: no limit"),
        )  # fmt: skip
        self.overlap = self._choices(
            (OverlapPolicy.SKIP, _("Skip it"),
             _("A moment due while the previous run is still active is skipped")),
            (OverlapPolicy.QUEUE_ONE, _("Let one wait"),
             _("A moment due while the previous run is still active waits for it; one at "
               "most")),
        )  # fmt: skip
        self.timeout = self._duration_edit(
            _("The global default"),
            _("A duration like 30m, 2h or 1d. Empty: the setting default-timeout. "
              "No time limit at all: type none (this English word)"),
        )  # fmt: skip
        self.retries = QSpinBox(self)
        self.retries.setRange(0, 100)
        self.idempotent = QCheckBox(_("Safe to run twice (idempotent)"), self)
        self._make_policy_fields()
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
        self.touched: set[str] = set()  # fields the person typed in
        self.show_all = False  # after a save was tried: every problem shows
        self._watch_touches()
        self._keys()
        for label, widget, key in rows:
            if label:  # the label names a field wrapped with its error line (no buddy)
                widget.setAccessibleName(label)
            form.addRow(label, self._with_error(widget, key))
        self._watch()

    def _make_policy_fields(self) -> None:
        """The policies' widgets (DESIGN §14); _policy_section lays them out."""
        self.except_dates = QLineEdit(self)
        self.except_dates.setPlaceholderText(_("e.g. 2026-12-24, 2026-12-31"))
        # Short labels, the how in the tooltip: the form fits its pane in every language.
        self.shadow = QCheckBox(_("Trial run (never start the command)"), self)
        self.shadow.setToolTip(_("Decide each moment as if live, never start the command. "
                                 "Untick to make it live: a new revision from now on"))  # fmt: skip
        self.max_runs = QSpinBox(self)
        self.max_runs.setRange(0, 10_000)
        self.max_runs.setSpecialValueText(_("no limit"))  # shown for 0
        self.max_runtime = self._duration_edit(
            _("No limit"),
            _("How long the routine's runs may take together in a day: a duration like 30m or "
              "2h. Empty: no limit"),
        )  # fmt: skip
        self.cooldown = self._duration_edit(
            _("No cooldown"),
            _("How long to rest after a failed run, doubled after each further failure: a "
              "duration like 15m or 1h. Empty: no rest"),
        )  # fmt: skip
        self.cooldown_max = self._duration_edit(
            _("One day"),
            _("The longest cooldown: a duration like 6h or 1d. Empty: one day"),
        )
        self.group = QLineEdit(self)
        self.group.setPlaceholderText(_("e.g. disk: one routine of a group runs at a time"))
        self.after = QLineEdit(self)
        self.after.setPlaceholderText(_("e.g. backup, or backup:finished for any end"))
        # Conditions and keeping awake (DESIGN §14): what a laptop's owner asks of a backup.
        self.on_ac_power = QCheckBox(_("Only on AC power"), self)
        self.on_ac_power.setToolTip(_("On battery, wait within the grace"))
        self.when_online = QCheckBox(_("Only when online"), self)
        self.when_online.setToolTip(_("Offline, wait within the grace"))
        self.keep_awake = QCheckBox(_("Keep the computer awake while it runs"), self)

    def _policy_section(self) -> QWidget:
        """The policies (DESIGN §14), folded away until asked for or set: most routines
        need none, and the preview keeps its room."""
        self.policies_toggle = QToolButton(self)
        # A short heading, what it holds in the tooltip: a button never wraps, and a longer
        # one made the whole scrolling pane wider than its view (every field cut at the right).
        self.policies_toggle.setText(_("Policies"))
        self.policies_toggle.setToolTip(_("Exclusions, trial, budgets, cooldown, group, chain, "
                                          "conditions"))  # fmt: skip
        self.policies_toggle.setCheckable(True)
        self.policies_toggle.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.policies_toggle.setArrowType(Qt.ArrowType.RightArrow)
        self.policies_toggle.setAutoRaise(True)
        self.policies_toggle.toggled.connect(self._show_policies)
        self.policies = QWidget(self)
        form = QFormLayout(self.policies)
        form.setContentsMargins(0, 0, 0, 0)
        # labels above their fields: in German they are as wide as the pane, and cut the fields
        form.setRowWrapPolicy(QFormLayout.RowWrapPolicy.WrapAllRows)
        rows: list[tuple[str, QWidget, str | None]] = [
            (_("Except on"), self.except_dates, "except_dates"),
            ("", self.shadow, None),
            (_("Runs a day"), self.max_runs, None),
            (_("Run time a day"), self.max_runtime, "max_runtime_per_day"),
            (_("Cooldown after a failure"), self.cooldown, "cooldown"),
            (_("Longest cooldown"), self.cooldown_max, "cooldown_max"),
            (_("Group"), self.group, None),
            (_("Also run after"), self.after, "after"),
            ("", self.on_ac_power, None),
            ("", self.when_online, None),
            ("", self.keep_awake, None),
        ]
        for label, widget, key in rows:
            if label:  # named by its label (wrapped with its error line: no buddy)
                widget.setAccessibleName(label)
            form.addRow(label, self._with_error(widget, key))
        self.policies.hide()
        return self.policies

    def _show_policies(self, shown: bool) -> None:
        opening = shown and self.policies.isHidden()
        self.policies.setVisible(shown)
        arrow = Qt.ArrowType.DownArrow if shown else Qt.ArrowType.RightArrow
        self.policies_toggle.setArrowType(arrow)
        if self.policies_toggle.isChecked() != shown:
            self.policies_toggle.setChecked(shown)
        if opening:  # once laid out: the rules in view, not opened below the fold
            QTimer.singleShot(0, self._scroll_to_policies)

    def _scroll_to_policies(self) -> None:
        if shiboken6.isValid(self) and self.policies.isVisible():
            self.fields.verticalScrollBar().setValue(self.policies_toggle.y())

    def _with_error(self, widget: QWidget, key: str | None) -> QWidget:
        if key is None:
            return widget
        box = QWidget(self)
        column = QVBoxLayout(box)
        column.setContentsMargins(0, 0, 0, 0)
        column.addWidget(widget)
        column.addWidget(self._error_label(key))
        if key == "command":  # what the command will meet: said, not refused
            self.command_warnings = QLabel(self)
            self.command_warnings.setObjectName("warnings:command")
            self.command_warnings.setWordWrap(True)
            self.tones.text(self.command_warnings, Tone.WARNING)
            self.command_warnings.hide()
            column.addWidget(self.command_warnings)
        return box

    def _error_label(self, key: str) -> QLabel:
        label = error_label(self, self.tones)
        label.setObjectName(f"error:{key}")
        self.errors[key] = label
        return label

    def _choices(self, *options: tuple[str, str, str]) -> QComboBox:
        """A combo of (value, short label, what it means): the meaning is the item's tooltip
        in the list and the combo's while it is the one chosen."""
        box = QComboBox(self)
        for value, label, meaning in options:
            box.addItem(label, value)
            box.setItemData(box.count() - 1, meaning, Qt.ItemDataRole.ToolTipRole)

        def explain(index: int) -> None:
            box.setToolTip(box.itemData(index, Qt.ItemDataRole.ToolTipRole))

        box.currentIndexChanged.connect(explain)
        explain(box.currentIndex())
        return box

    def _duration_edit(self, empty: str, how: str) -> QLineEdit:
        """A duration; left empty it means what ``empty`` says in the reader's words (the
        engine's keywords, ``none`` and ``default``, are English: RoutineDraft reads an
        empty field as them)."""
        edit = QLineEdit(self)
        edit.setPlaceholderText(empty)
        edit.setToolTip(how)
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

    def _keys(self) -> None:
        """Enter saves, Esc cancels, from any field of the form."""
        context = Qt.ShortcutContext.WidgetWithChildrenShortcut
        for key, act in ((Qt.Key.Key_Return, self.save), (Qt.Key.Key_Enter, self.save),
                         (Qt.Key.Key_Escape, self.close_editor)):  # fmt: skip
            shortcut = QShortcut(QKeySequence(key), self)
            shortcut.setContext(context)
            shortcut.activated.connect(act)

    def _watch_touches(self) -> None:
        """A field's problem shows once the person has typed in it (or tried to save): an
        empty form says nothing yet."""
        fields = {"name": self.name, "schedule": self.schedule, "command": self.command,
                  "grace": self.grace, "timeout": self.timeout,
                  "except_dates": self.except_dates, "max_runtime_per_day": self.max_runtime,
                  "cooldown": self.cooldown, "cooldown_max": self.cooldown_max,
                  "after": self.after}  # fmt: skip
        for key, edit in fields.items():
            edit.textEdited.connect(lambda _text, key=key: self._touch(key))
        zone_line = self.zone.lineEdit()
        if zone_line is not None:
            zone_line.textEdited.connect(lambda _text: self._touch("timezone"))
        self.zone.activated.connect(lambda _index: self._touch("timezone"))

    def _touch(self, key: str) -> None:
        self.touched.add(key)

    def _watch(self) -> None:
        """Any change starts (or restarts) the debounce timer."""
        edits = (self.name, self.schedule, self.command, self.grace, self.timeout,
                 self.except_dates, self.max_runtime, self.cooldown, self.cooldown_max,
                 self.group, self.after)  # fmt: skip
        for edit in edits:
            edit.textChanged.connect(self._changed)
        self.zone.currentTextChanged.connect(self._changed)
        for box in (self.misfire, self.overlap):
            box.currentIndexChanged.connect(self._changed)
        for check in (self.shell, self.idempotent, self.shadow, self.on_ac_power,
                      self.when_online, self.keep_awake):  # fmt: skip
            check.toggled.connect(self._changed)
        self.retries.valueChanged.connect(self._changed)
        self.max_runs.valueChanged.connect(self._changed)

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
        self.touched.clear()
        self.show_all = self.editing is not None  # a stored routine's problems are news
        self.show()
        (self.schedule if self.name.text() else self.name).setFocus()
        self._debounce.start()

    def _fill(self, draft: RoutineDraft) -> None:
        self.name.setText(draft.name)
        self.schedule.setText(draft.schedule)
        self.zone.set_zone(draft.timezone)
        self.command.setText(draft.command)
        self.shell.setChecked(draft.shell)
        self.misfire.setCurrentIndex(self.misfire.findData(draft.misfire))
        self.grace.setText(draft.grace)
        self.overlap.setCurrentIndex(self.overlap.findData(draft.overlap))
        self.timeout.setText(draft.timeout)
        self.retries.setValue(draft.retries)
        self.idempotent.setChecked(draft.idempotent)
        self.except_dates.setText(draft.except_dates)
        self.shadow.setChecked(draft.shadow)
        self.max_runs.setValue(draft.max_runs_per_day)
        self.max_runtime.setText(draft.max_runtime_per_day)
        self.cooldown.setText(draft.cooldown)
        self.cooldown_max.setText(draft.cooldown_max)
        self.group.setText(draft.group)
        self.after.setText(draft.after)
        self.on_ac_power.setChecked(draft.on_ac_power)
        self.when_online.setChecked(draft.when_online)
        self.keep_awake.setChecked(draft.keep_awake)
        self._show_policies(draft.has_policies)

    def close_editor(self) -> None:
        self._debounce.stop()
        self._generation += 1  # a check still in flight is no longer shown
        self.hide()
        self.closed.emit()

    def draft(self) -> RoutineDraft:
        return RoutineDraft(
            name=self.name.text().strip(),
            schedule=self.schedule.text(),
            timezone=self.zone.zone(),
            command=self.command.text(),
            shell=self.shell.isChecked(),
            misfire=MisfirePolicy(self.misfire.currentData()),
            grace=self.grace.text(),
            overlap=OverlapPolicy(self.overlap.currentData()),
            timeout=self.timeout.text(),
            retries=self.retries.value(),
            idempotent=self.idempotent.isChecked(),
            except_dates=self.except_dates.text(),
            shadow=self.shadow.isChecked(),
            max_runs_per_day=self.max_runs.value(),
            max_runtime_per_day=self.max_runtime.text(),
            cooldown=self.cooldown.text(),
            cooldown_max=self.cooldown_max.text(),
            group=self.group.text(),
            after=self.after.text(),
            on_ac_power=self.on_ac_power.isChecked(),
            when_online=self.when_online.isChecked(),
            keep_awake=self.keep_awake.isChecked(),
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
            if key == "form" and not message:
                continue
            shown = key == "form" or self.show_all or key in self.touched
            label.setText(message or "")
            label.setVisible(bool(message) and shown)
        said = self.show_all or "command" in self.touched
        show_error(self.command_warnings, "\n".join(result.warnings) if said else None)
        if any(result.message(key) for key in _POLICY_FIELDS):
            self._show_policies(True)  # a problem is never folded away
        self.preview.clear()
        self.words.clear()
        notes: list[str] = []
        if result.preview is not None:
            self.words.setText(describe_timetable(result.preview.timetable, self.desktop.locale))
            notes = self._fill_preview(result.preview)
        self.notes.setText("\n".join(f"• {note}" for note in dict.fromkeys(notes)))
        self.notes.setVisible(bool(notes))

    def _fill_preview(self, preview: Preview) -> list[str]:
        """The moments as rows; the time-zone notes they carry, in order."""
        interval = preview.timetable.kind is ScheduleKind.INTERVAL
        shown = [*preview.moments, *([preview.ruled] if preview.ruled is not None else [])]
        # Seconds only where a moment has some: the pane is narrow, and "02:30:00" pushed the
        # status out of sight in German ("Übersprunge").
        seconds = any(moment.local.second for moment in shown)
        notes = [self._add_moment(preview, moment, interval, seconds)
                 for moment in preview.moments]  # fmt: skip
        if not preview.moments:
            self._add_line(_("No further occurrences"))
        if preview.ruled is not None:  # however far ahead: before a 02:30 routine is saved
            self._add_line(_("… the next clock change:"))
            notes.append(self._add_moment(preview, preview.ruled, interval, seconds))
        self._fit_preview()
        return [note for note in notes if note]

    def _fit_preview(self) -> None:
        """At most PREVIEW_MOST_ROWS rows high, measured from a row that is there: the same
        height whatever the list holds, so the form does not jump while one types."""
        row = self.preview.sizeHintForRow(0)
        if row <= 0:
            return
        chrome = self.preview.header().sizeHint().height() + 2 * self.preview.frameWidth()
        self.preview.setMaximumHeight(chrome + PREVIEW_MOST_ROWS * row + row // 2)

    def _add_line(self, text: str) -> None:
        """A line of words across the columns: it must not widen the time's column."""
        item = QTreeWidgetItem([text])
        self.preview.addTopLevelItem(item)
        item.setFirstColumnSpanned(True)  # spanning works once the item is in the tree

    def _add_moment(
        self, preview: Preview, moment: BoundTime, interval: bool, seconds: bool
    ) -> str:
        locale = self.desktop.locale
        wall = wall_text(moment.local, locale, seconds=seconds)
        note = preview.note(moment, locale) or ""
        skip = preview.skip_reason(moment)
        cells = [wall, "UTC" + format_offset(moment.offset), self._status(moment, interval, skip)]
        item = QTreeWidgetItem(cells)
        item.setData(0, KindRole, moment.kind.value)
        for column in range(len(cells)):
            item.setToolTip(column, note)
        if skip is not None:
            font = item.font(0)
            font.setStrikeOut(True)
            item.setFont(0, font)
        self.preview.addTopLevelItem(item)
        return note

    def _status(self, moment: BoundTime, interval: bool, skip: str | None) -> str:
        if skip == SkipReason.EXCLUDED_DATE:
            return _("Skipped: an excluded date")
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
        self.show_all = True  # a save asks for every problem at once
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
