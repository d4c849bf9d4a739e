"""Guards against known defects of the Qt binding this app depends on."""

from __future__ import annotations

import subprocess
import sys

_EMIT_MANY = """
import sys
from PySide6.QtCore import QCoreApplication, QObject, Signal
app = QCoreApplication(["x"])
class S(QObject):
    ping = Signal()
s = S()
for _ in range(20_000):
    s.ping.emit()
print("ok")
"""


def test_signal_emission_does_not_corrupt_reference_counts() -> None:
    """PySide6 6.12.0 decrefs a bool on every emit() and crashes after ~1,000 emits
    (bool_dealloc); pyproject excludes that release. This fails if one like it comes back."""
    done = subprocess.run([sys.executable, "-c", _EMIT_MANY], capture_output=True, text=True,
                          env={"QT_QPA_PLATFORM": "offscreen", "PATH": "/usr/bin:/bin"})  # fmt: skip
    assert (done.returncode, done.stdout.strip()) == (0, "ok"), done.stderr[-500:]
