"""A time zone to pick or type: this computer's zone first, by its key, then UTC and every
IANA key (the routine editor's and the Import window's).

The engine's word for this computer's zone is ``local``, and it is what :meth:`ZoneBox.zone`
gives for the first item; the engine binds it to the computer's key when it reads it
(``tz.local``, CONTRACT §3.2). A person sees "Europe/Berlin (this computer's zone)", not the
keyword.
"""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox, QCompleter, QWidget

from coven_core import queries
from coven_core.errors import CovenError
from coven_core.queries import _

LOCAL = "local"


class ZoneBox(QComboBox):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setEditable(True)
        self.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        # as wide as the pane lets it be, not as the longest zone name (which pushed its label
        # above it): a name typed or picked is shown whole when the pane allows
        self.setSizeAdjustPolicy(QComboBox.SizeAdjustPolicy.AdjustToMinimumContentsLengthWithIcon)
        self.setMinimumContentsLength(16)
        words, meaning = _this_computers()
        self.addItem(words)
        self.setItemData(0, meaning, Qt.ItemDataRole.ToolTipRole)
        self.addItems(["UTC", *sorted(queries.available_zones() - {"UTC"})])
        completer = QCompleter(self.model(), self)
        completer.setCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        completer.setFilterMode(Qt.MatchFlag.MatchContains)
        self.setCompleter(completer)
        self.currentIndexChanged.connect(self._show_start)

    def _show_start(self) -> None:
        """A narrow field shows the key at the start, not the end of the words after it."""
        shown = self.lineEdit()
        if shown is not None:
            shown.setCursorPosition(0)

    def zone(self) -> str:
        """What the engine reads: ``local`` for this computer's zone, else the text as typed."""
        text = self.currentText().strip()
        return LOCAL if text == self.itemText(0) else text

    def set_zone(self, zone: str) -> None:
        if zone.strip().lower() == LOCAL:
            self.setCurrentIndex(0)
        else:
            self.setCurrentText(zone)
        self._show_start()


def _this_computers() -> tuple[str, str]:
    """The first item's words, and the sentence behind them (its tooltip)."""
    try:
        key = queries.resolve_local_zone().key
    except CovenError as error:  # no key can be proven: saying so is the engine's to do
        return _("This computer's zone"), str(error)
    # the key first: in a narrow field it is what must show
    return _("{zone} (this computer's zone)").format(zone=key), _(
        "The zone this computer is set to, now {zone}. The routine keeps it; if the "
        "computer's zone changes, Coven asks whether the routine should follow."
    ).format(zone=key)
