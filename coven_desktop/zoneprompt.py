"""The "keep or follow" question after the host's time zone changed (DESIGN §3).

One non-modal box per routine that was created as ``local``: the tray keeps working while it
is open, and nothing changes until the person answers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from PySide6.QtWidgets import QMessageBox, QWidget

from coven_core.queries import _

if TYPE_CHECKING:  # the operator API loads when first used, not with the tray
    from coven_core.operator import ZoneChoice


class ZonePrompt(QMessageBox):
    def __init__(
        self, choice: ZoneChoice, follow: Callable[[ZoneChoice], object], parent: QWidget | None
    ) -> None:
        super().__init__(parent)
        self.choice = choice
        self.setWindowTitle(_("Your time zone changed"))
        self.setText(
            _(
                "This computer is now in {new}. The routine \u201c{routine}\u201d runs in {old}. "
                "Should it keep {old} or follow you to {new}?"
            ).format(new=choice.host_zone, old=choice.kept_zone, routine=choice.routine)
        )
        self.keep_button = self.addButton(
            _("Keep {zone}").format(zone=choice.kept_zone), QMessageBox.ButtonRole.RejectRole
        )
        self.follow_button = self.addButton(
            _("Follow me to {zone}").format(zone=choice.host_zone),
            QMessageBox.ButtonRole.AcceptRole,
        )
        self.buttonClicked.connect(lambda button: button is self.follow_button and follow(choice))
