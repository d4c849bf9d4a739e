"""Export routines as systemd units or Kubernetes CronJobs (DESIGN §15): the same files and
the same dry run as ``coven export``, routine by routine, then one click writes them.

A person picks the target (and, for Kubernetes, the image that has the commands) and the
folder. The window shows, for each routine, the files it would write, what does not carry
over and each moment of the coming year where the target's DST behaviour differs from
Coven's; a routine the target cannot express is shown with why, and left out. Nothing is
written until "Export"; a file of the same name already in the folder is replaced only
after the person says so. Non-modal, like every Coven window.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import platformdirs
from PySide6.QtCore import Qt, QUrl
from PySide6.QtGui import QDesktopServices
from PySide6.QtWidgets import (
    QFileDialog,
    QFormLayout,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QWidget,
)

from coven_core import queries
from coven_core.engine import Engine
from coven_core.errors import CovenError
from coven_core.queries import Exported, ForeignScheduler, Refused, _, ngettext
from coven_desktop.windows.common import ask, show_error
from coven_desktop.windows.moving_dialog import MovingDialog, add_notes, moving_notes

if TYPE_CHECKING:
    from coven_desktop.desktop import Desktop

#: The routine's name on each of its rows, to know which are ticked.
NameRole = Qt.ItemDataRole.UserRole + 1


@dataclass(frozen=True)
class Target:
    """One choice in "Export to"."""

    label: str
    scheduler: ForeignScheduler
    needs_image: bool


class ExportDialog(MovingDialog):
    def __init__(self, desktop: Desktop, parent: QWidget | None = None) -> None:
        super().__init__(desktop, _("Export routines"), parent)
        self.each: list[Exported | Refused] = []
        self.confirmation: QMessageBox | None = None
        self.written: Path | None = None  # the folder of the last export
        self.targets = [
            Target(_("systemd units (a .service and a .timer each)"),
                   ForeignScheduler.SYSTEMD, False),
            Target(_("Kubernetes CronJobs (JSON)"), ForeignScheduler.KUBERNETES, True),
        ]  # fmt: skip
        self._lay_out(self._form(), self._tree(), self._buttons())
        self._target_changed()

    # -- building ---------------------------------------------------------------------------
    def _form(self) -> QFormLayout:
        form = QFormLayout()
        labels = [target.label for target in self.targets]
        self.target = self._choices(labels, _("Export to"), self._target_changed)
        form.addRow(_("Export to:"), self.target)
        self.image = QLineEdit(self)
        self.image.setAccessibleName(_("Image"))
        self.image.setPlaceholderText(_("The image that has the routines' commands, e.g. "
                                        "registry.example.com/tools:1.4"))  # fmt: skip
        self.image.editingFinished.connect(self.read)
        self.image_label = QLabel(_("Image:"), self)
        form.addRow(self.image_label, self.image)
        documents = Path(platformdirs.user_documents_dir())
        self.folder = QLineEdit(str(documents / "coven-export"), self)
        self.folder.setAccessibleName(_("Folder"))
        self.folder.textChanged.connect(lambda _text: self._update_button())
        form.addRow(_("Into the folder:"), self._with_chooser(self.folder, self._choose_folder)[0])
        return form

    def _tree(self) -> QTreeWidget:
        tree = QTreeWidget(self)
        tree.setColumnCount(3)
        tree.setHeaderLabels([_("Routine"), _("Files"), _("Notes")])
        tree.setAccessibleName(_("What the export would write"))
        tree.setColumnWidth(0, 240)
        tree.setColumnWidth(1, 380)
        tree.setWordWrap(True)
        tree.itemChanged.connect(lambda _item, _column: self._update_button())
        return tree

    def _buttons(self) -> QHBoxLayout:
        self.open_folder = QPushButton(_("Open the folder"), self)
        self.open_folder.setVisible(False)
        self.open_folder.clicked.connect(self._open_folder)
        self.export_button = QPushButton(_("Export"), self)
        self.export_button.clicked.connect(self.apply)
        return self._button_row(self.export_button, self.open_folder)

    # -- choosing ---------------------------------------------------------------------------
    @property
    def chosen(self) -> Target:
        return self.targets[self.target.currentIndex()]

    def _target_changed(self) -> None:
        for widget in (self.image_label, self.image):
            widget.setVisible(self.chosen.needs_image)
        self.read()

    def _choose_folder(self) -> None:
        chosen = QFileDialog.getExistingDirectory(self, _("Export into"), self.folder.text())
        if chosen:
            self.folder.setText(chosen)

    def ticked(self) -> list[str]:
        """The routines the export would write, as ticked."""
        found = []
        for index in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(index)
            if item is not None and item.checkState(0) == Qt.CheckState.Checked:
                found.append(str(item.data(0, NameRole)))
        return found

    # -- the dry run --------------------------------------------------------------------------
    def read(self) -> asyncio.Future[None]:
        """Every routine as the target would have it, off the GUI thread, and show it."""
        target, image = self.chosen, self.image.text().strip()
        return self._tasks.spawn(self._read(target, image))

    async def _read(self, target: Target, image: str) -> None:
        if target.needs_image and not image:
            self._show([], _("Give the image that has the routines' commands: Kubernetes "
                             "runs them in it."))  # fmt: skip
            return
        start = self.desktop.clock.now_utc()

        def dry_run(engine: Engine) -> list[Exported | Refused]:
            routines = queries.stored_each(engine.store)  # a broken one among the rest
            render = queries.renderer(target.scheduler, image or None)
            return queries.export_each(target.scheduler, routines, render, start)

        try:
            each = await self.desktop.service.call(dry_run)
        except CovenError as error:
            self._show([], str(error))
            return
        self._show(each, None)

    def _show(self, each: list[Exported | Refused], problem: str | None) -> None:
        self.each = each
        self.tree.blockSignals(True)  # ticks set here are not the person's
        self.tree.clear()
        for one in each:
            self.tree.addTopLevelItem(self._item(one))
        self._span_notes()
        self.tree.expandAll()
        self.tree.blockSignals(False)
        show_error(self.error, problem)
        self.open_folder.setVisible(False)
        self._update_button()

    def _item(self, one: Exported | Refused) -> QTreeWidgetItem:
        if isinstance(one, Refused):
            item = QTreeWidgetItem([one.name, "", _("Cannot be exported")])
            item.setFlags(item.flags() & ~Qt.ItemFlag.ItemIsEnabled)
            item.setCheckState(0, Qt.CheckState.Unchecked)
            add_notes(item, [one.why])
        else:
            files = ", ".join(sorted(one.rendered.files))
            count = len(one.rendered.notes) + len(one.differences)
            said = ngettext("{n} note", "{n} notes", count).format(n=count) if count else ""
            item = QTreeWidgetItem([one.name, files, said])
            item.setToolTip(1, files)
            item.setCheckState(0, Qt.CheckState.Checked)
            add_notes(item, moving_notes(one.rendered.notes, one.differences))
        item.setData(0, NameRole, one.name)
        return item

    def _update_button(self) -> None:
        count, folder = len(self.ticked()), self.folder.text().strip()
        self.export_button.setEnabled(count > 0 and bool(folder))
        self.export_button.setText(
            ngettext("Export {n} routine", "Export {n} routines", count).format(n=count)
            if count
            else _("Export")
        )
        self.summary.setText(self._summary(count, folder))

    def _summary(self, count: int, folder: str) -> str:
        if not self.each:
            return ""
        refused = sum(1 for one in self.each if isinstance(one, Refused))
        wrote = ngettext("Would write {n} routine into {folder}.",
                         "Would write {n} routines into {folder}.", count)  # fmt: skip
        parts = [wrote.format(n=count, folder=folder or "…")]
        if refused:
            parts.append(ngettext(
                "{n} routine cannot be exported to this target: see below.",
                "{n} routines cannot be exported to this target: see below.", refused,
            ).format(n=refused))  # fmt: skip
        parts.append(_("Nothing is written until you choose Export."))
        never = "; ".join(_(line) for line in queries.NEVER_CARRIED)
        return " ".join(parts) + "\n" + _("Never carried over: {what}.").format(what=never)

    # -- writing ------------------------------------------------------------------------------
    def apply(self) -> asyncio.Future[None]:
        return self._tasks.spawn(self._apply())

    async def _apply(self) -> None:
        """Write what the dry run showed for the ticked routines, after asking before any
        file of the same name is replaced."""
        ticked, folder = set(self.ticked()), Path(self.folder.text().strip()).expanduser()
        chosen = [one for one in self.each if isinstance(one, Exported) and one.name in ticked]
        if not chosen:
            return
        taken = sorted(name for one in chosen for name in one.rendered.files
                       if (folder / name).exists())  # fmt: skip
        if taken:
            self._ask_to_replace(chosen, folder, taken)
            return
        await self._write(chosen, folder)

    def _ask_to_replace(self, chosen: list[Exported], folder: Path, taken: list[str]) -> None:
        question = ngettext("{n} file of this export is already in {folder}. Replace it?",
                            "{n} files of this export are already in {folder}. Replace them?",
                            len(taken)).format(n=len(taken), folder=folder)  # fmt: skip
        write = lambda: self._tasks.spawn(self._write(chosen, folder))  # noqa: E731
        self.confirmation = ask(self, _("Replace files"), question, ", ".join(taken),
                                _("Replace"), write)  # fmt: skip

    async def _write(self, chosen: list[Exported], folder: Path) -> None:
        """The files as rendered for the dry run the person read; off the GUI thread."""
        done = queries.Export(self.chosen.scheduler, tuple(chosen))
        count = sum(len(one.rendered.files) for one in chosen)
        self.export_button.setEnabled(False)
        try:
            await self.desktop.service.call(lambda _engine: done.write(folder))
        except OSError as error:
            said = _("cannot write into {folder}: {reason}; the files written before it are "
                     "there").format(folder=folder, reason=error.strerror or error)  # fmt: skip
            show_error(self.error, said)
            self._update_button()
            return
        show_error(self.error, None)
        self.written = folder
        self.summary.setText(ngettext("Wrote {n} file into {folder}.",
                                      "Wrote {n} files into {folder}.", count)
                             .format(n=count, folder=folder))  # fmt: skip
        self.open_folder.setVisible(True)
        self.export_button.setEnabled(True)

    def _open_folder(self) -> None:
        if self.written is not None:
            QDesktopServices.openUrl(QUrl.fromLocalFile(str(self.written)))
