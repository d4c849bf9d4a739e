"""Import routines from cron, systemd or launchd (DESIGN §15): the same dry run as
``coven import``, then one click creates them.

A person picks where the jobs are — their own crontab (``crontab -l``), a crontab file, a
systemd timer or a launchd plist — and the zone those jobs ran in. The window shows what
would be created, every line that cannot be imported and why, and each moment of the
coming year where Coven's DST policy does something other than the old scheduler did.
Nothing is created until "Create"; a taken name refuses the whole import, creating none.
Non-modal, like every Coven window: the tray keeps working.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QWidget,
)

from coven_core import queries
from coven_core.errors import CovenError
from coven_core.queries import ForeignScheduler, ImportPlan, PlannedRoutine, _, ngettext
from coven_desktop.windows.common import act, show_error
from coven_desktop.windows.moving_dialog import MovingDialog, add_notes, moving_notes
from coven_desktop.windows.zone_box import LOCAL, ZoneBox

if TYPE_CHECKING:
    from coven_desktop.desktop import Desktop


@dataclass(frozen=True)
class Source:
    """One choice in "Import from": which scheduler, and whether it is read from a file."""

    label: str
    origin: ForeignScheduler
    file_filter: str | None  # None: this user's crontab, read with crontab -l


#: Pixels the preview's Routine, Command and From columns take, least and most; the
#: Schedule column has what is left.
_COLUMN_BOUNDS = {0: (120, 240), 2: (160, 300), 3: (60, 160)}


class ImportDialog(MovingDialog):
    imported = Signal(list)  # the names of the routines created

    def __init__(self, desktop: Desktop, parent: QWidget | None = None) -> None:
        super().__init__(desktop, _("Import routines"), parent)
        self.plan: ImportPlan | None = None
        self.sources = [
            Source(_("My crontab"), ForeignScheduler.CRON, None),
            Source(_("A crontab file"), ForeignScheduler.CRON, _("All files (*)")),
            Source(_("A systemd timer"), ForeignScheduler.SYSTEMD,
                   _("systemd timers (*.timer)")),
            Source(_("A launchd job"), ForeignScheduler.LAUNCHD,
                   _("launchd jobs (*.plist)")),
        ]  # fmt: skip
        self._lay_out(self._form(), self._tree(), self._buttons())
        self._source_changed()

    # -- building ---------------------------------------------------------------------------
    def _form(self) -> QFormLayout:
        form = QFormLayout()
        labels = [source.label for source in self.sources]
        self.source = self._choices(labels, _("Import from"), self._source_changed)
        form.addRow(_("Import from:"), self.source)
        self.path = QLineEdit(self)
        self.path.setAccessibleName(_("File"))
        self.path.setPlaceholderText(_("The file to import"))
        self.path.editingFinished.connect(self.read)
        row, self.choose = self._with_chooser(self.path, self._choose_file)
        self.file_label = QLabel(_("File:"), self)
        form.addRow(self.file_label, row)
        self.zone = ZoneBox(self)
        self.zone.setAccessibleName(_("Time zone the jobs ran in"))
        self.zone.setToolTip(_(
            "The zone the old scheduler used: this computer's, or an IANA name such as "
            "Europe/Berlin. A CRON_TZ line in a crontab wins over it."
        ))  # fmt: skip
        self.zone.activated.connect(self.read)  # picked from the list
        typed = self.zone.lineEdit()
        if typed is not None:
            typed.editingFinished.connect(self.read)
        form.addRow(_("They ran in:"), self.zone)
        return form

    def _tree(self) -> QTreeWidget:
        tree = QTreeWidget(self)
        tree.setColumnCount(4)
        tree.setHeaderLabels([_("Routine"), _("Schedule"), _("Command"), _("From")])
        tree.setAccessibleName(_("What the import would do"))
        header = tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)  # the schedule's words
        for column, (least, _most) in _COLUMN_BOUNDS.items():
            tree.setColumnWidth(column, least)
        tree.setWordWrap(True)
        return tree

    def _buttons(self) -> QHBoxLayout:
        self.create_button = QPushButton(_("Create"), self)
        self.create_button.setEnabled(False)
        self.create_button.clicked.connect(self.apply)
        return self._button_row(self.create_button)

    # -- choosing the source ----------------------------------------------------------------
    @property
    def chosen(self) -> Source:
        return self.sources[self.source.currentIndex()]

    def _source_changed(self) -> None:
        from_file = self.chosen.file_filter is not None
        for widget in (self.file_label, self.path, self.choose):
            widget.setVisible(from_file)
        if from_file and not self.path.text():
            self._show(None, None)  # wait for a file
        else:
            self.read()

    def _choose_file(self) -> None:
        chosen, _filter = QFileDialog.getOpenFileName(
            self, _("Import from"), str(Path.home()), self.chosen.file_filter or ""
        )
        if chosen:
            self.path.setText(chosen)
            self.read()

    # -- the dry run --------------------------------------------------------------------------
    def read(self) -> asyncio.Future[None]:
        """Read the chosen source into a dry run, off the GUI thread, and show it."""
        return self._tasks.spawn(self._read(self.chosen, self.path.text().strip(),
                                            self.zone.zone() or LOCAL))  # fmt: skip

    async def _read(self, source: Source, path: str, zone: str) -> None:
        if source.file_filter is not None and not path:
            self._show(None, None)
            return
        now = self.desktop.clock.now_utc()

        def dry_run(_engine: object) -> ImportPlan:
            text = queries.users_crontab() if source.file_filter is None else Path(path)
            return queries.import_preview(source.origin, text, zone, now)

        try:
            plan = await self.desktop.service.call(dry_run)
        except CovenError as error:
            self._show(None, str(error))
            return
        self._show(plan, None)

    def _show(self, plan: ImportPlan | None, problem: str | None) -> None:
        self.plan = plan
        self.tree.clear()
        show_error(self.error, problem)
        count = 0 if plan is None else len(plan.routines)
        self.create_button.setEnabled(count > 0)
        self.create_button.setText(
            ngettext("Create {n} routine", "Create {n} routines", count).format(n=count)
            if count
            else _("Create")
        )
        if plan is None:
            self.summary.setText("" if problem else _("Choose what to import."))
            return
        self.summary.setText(self._summary(plan))
        for routine in plan.routines:
            self.tree.addTopLevelItem(self._routine_item(routine, plan.start))
        if plan.not_imported:
            refused = self._refused_item(plan)
            self.tree.addTopLevelItem(refused)
            refused.setFirstColumnSpanned(True)  # a heading, not a routine's name
        self._span_notes()
        self._fit_columns(plan)
        self.tree.expandAll()

    def _fit_columns(self, plan: ImportPlan) -> None:
        """The name, command and source columns as wide as their widest routine's cell,
        within bounds; the schedule's words take the rest (a note spans every column and is
        not measured)."""
        metrics, padding = self.tree.fontMetrics(), 2 * self.tree.indentation()
        items = [self.tree.topLevelItem(row) for row in range(len(plan.routines))]
        for column, (least, most) in _COLUMN_BOUNDS.items():
            texts = (item.text(column) for item in items if item is not None)
            widest = max(map(metrics.horizontalAdvance, texts), default=0)
            self.tree.setColumnWidth(column, min(most, max(least, widest + padding)))

    def _summary(self, plan: ImportPlan) -> str:
        differing = sum(1 for routine in plan.routines if routine.differences)
        count, refused = len(plan.routines), len(plan.not_imported)
        parts = [ngettext("Would create {n} routine.", "Would create {n} routines.",
                          count).format(n=count)]  # fmt: skip
        if refused:
            lines = ngettext("{n} line cannot be imported.", "{n} lines cannot be imported.",
                             refused)  # fmt: skip
            parts.append(lines.format(n=refused))
        if differing:
            parts.append(ngettext(
                "{n} routine would run differently from before at a daylight-saving change in "
                "the coming year: see below.",
                "{n} routines would run differently from before at a daylight-saving change in "
                "the coming year: see below.",
                differing,
            ).format(n=differing))  # fmt: skip
        parts.append(_("Nothing is created until you choose Create."))
        return " ".join(parts)

    def _routine_item(self, routine: PlannedRoutine, start: datetime) -> QTreeWidgetItem:
        """Its schedule as the Routines page will say it; the tooltip adds the notation it
        stores (``cron:30 2 * * *``)."""
        spec = routine.spec
        command = spec.argv[0] if spec.shell else " ".join(spec.argv)
        schedule = queries.schedule_words(routine, start, self.desktop.locale)
        item = QTreeWidgetItem([routine.name, schedule, command, routine.source])
        stored = _("{schedule} in {zone}").format(schedule=spec.schedule, zone=spec.timezone)
        item.setToolTip(1, f"{schedule}\n{stored}")  # the whole sentence, however narrow
        item.setToolTip(2, command)
        item.setData(0, Qt.ItemDataRole.UserRole, routine.name)
        add_notes(item, moving_notes(routine.notes, routine.differences))
        return item

    def _refused_item(self, plan: ImportPlan) -> QTreeWidgetItem:
        heading = _("Not imported ({n})").format(n=len(plan.not_imported))
        item = QTreeWidgetItem([heading])
        for refused in plan.not_imported:
            line = _("{source}: {text} — {why}").format(
                source=refused.source, text=refused.text, why=refused.why
            )
            child = QTreeWidgetItem([line])
            child.setToolTip(0, line)
            item.addChild(child)
        return item

    # -- creating -----------------------------------------------------------------------------
    def apply(self) -> asyncio.Future[None]:
        return self._tasks.spawn(self._apply())

    async def _apply(self) -> None:
        plan = self.plan
        if plan is None or not plan.routines:
            return
        wanted = [(routine.name, routine.spec) for routine in plan.routines]
        self.create_button.setEnabled(False)
        done = await act(self.desktop, lambda e: e.operator.import_routines(wanted))
        if not done.ok:
            show_error(self.error, done.refusal)
            self.create_button.setEnabled(True)
            return
        names = [routine.name for routine in plan.routines]
        self.imported.emit(names)
        created = ngettext("Created {n} routine.", "Created {n} routines.", len(names))
        self.summary.setText(created.format(n=len(names)))
        self._show_created(plan)

    def _show_created(self, plan: ImportPlan) -> None:
        self.plan = None
        self.create_button.setEnabled(False)
        self.create_button.setText(_("Create"))
        for index in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(index)
            if item is not None and item.data(0, Qt.ItemDataRole.UserRole):
                item.setText(0, _("{name} (created)").format(name=item.text(0)))
