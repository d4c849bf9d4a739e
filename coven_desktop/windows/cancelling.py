"""Cancel asks once: a non-blocking question (``QMessageBox.open()``), and on Yes the
operator's cancel through ``desktop.act`` — audited, fenced to the attempt, and every view
refreshed. One question for the Runs window, a run's detail and the Routines window."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QMessageBox, QWidget

from coven_core.engine import Engine
from coven_core.queries import _

if TYPE_CHECKING:
    from coven_desktop.desktop import Desktop


def ask_to_cancel(
    desktop: Desktop, parent: QWidget, routine: str, work: Callable[[Engine], object]
) -> QMessageBox:
    """Ask whether to stop ``routine``'s run; ``work`` (the operator call) runs on Yes. The box
    is returned open (tests answer it) and deletes itself when answered."""
    box = QMessageBox(
        QMessageBox.Icon.Question,
        _("Cancel the run"),
        _(
            "Stop the running command of {routine}? Coven asks it to end, then ends it after "
            "its grace period; the run counts as cancelled."
        ).format(routine=routine),
        QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.No,
        parent,
    )
    box.setDefaultButton(QMessageBox.StandardButton.No)
    box.button(QMessageBox.StandardButton.Yes).setText(_("Cancel the run"))
    box.button(QMessageBox.StandardButton.No).setText(_("Keep it running"))

    def answered(answer: int) -> None:
        box.deleteLater()
        if answer == QMessageBox.StandardButton.Yes:
            desktop.act(work)

    box.finished.connect(answered)
    box.open()
    return box
