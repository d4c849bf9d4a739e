"""The floor of ``bench_idle``: the bare tray app with qasync and the engine imported
(``idle_bare --with-engine``), the engine and asyncio loaded before Qt as the app loads them
(``coven_desktop/__init__``: asyncio without OpenSSL), so that PySide6's import hook does not
read their source here either, and that hook quieted as the app quiets it
(``coven_desktop.quiet_feature_hook``): what the contract's design costs before the app does
anything.

Run: python3 -m benchmarks.idle_floor   (from the repository root)
"""

from __future__ import annotations

import sys

# As coven_desktop.import_asyncio_without_tls does, without loading the app's package:
# asyncio without OpenSSL, which the design never needs.
sys.modules["ssl"] = None  # type: ignore[assignment]
import asyncio  # noqa: E402, F401  (qasync's loop)

del sys.modules["ssl"]

from coven_core import engine  # noqa: E402

engine.load_scheduler()

from PySide6 import QtCore  # noqa: E402, F401  (installs the hook)

# As coven_desktop.quiet_feature_hook does, without loading the app's package.
_feature = sys.modules.get("PySide6.support.feature")
if callable(getattr(_feature, "_mod_uses_pyside", None)):
    _feature._mod_uses_pyside = lambda module: False  # type: ignore[union-attr]

if __name__ == "__main__":
    from benchmarks.idle_bare import main  # Qt, after the engine

    sys.exit(main(["--with-engine"]))
