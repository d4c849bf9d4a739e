"""The desktop app's own preferences, kept in ``desktop.ini`` in the data directory.

Which kinds of notice a person turned off (``notifications.NoticeSettings``) and where they
left the main window (``app_window``). Not engine settings (``coven config``): those are
scheduling rules — audited, waking the scheduler, applied to the runs claimed next — and
these are only how this app shows itself. The file sits beside the store, so each store
(and each test) has its own, and it is private like every file there (DESIGN §13).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import QSettings

FILE = "desktop.ini"


class Preferences:
    def __init__(self, data_dir: Path) -> None:
        self.path = data_dir / FILE
        self._settings = QSettings(str(self.path), QSettings.Format.IniFormat)

    def value(self, key: str, default: Any = None, kind: type | None = None) -> Any:
        """The stored value, as ``kind`` when given; ``default`` when there is none."""
        if kind is None:
            return self._settings.value(key, default)
        return self._settings.value(key, default, type=kind)

    def set(self, key: str, value: Any) -> None:
        """Written at once, the file kept private (QSettings writes it with the umask's mode)."""
        self._settings.setValue(key, value)
        self._settings.sync()
        if self.path.exists():
            os.chmod(self.path, 0o600)
