"""Assets, found the same way in an editable install, a wheel and a frozen bundle.

Everything is looked up through :mod:`importlib.resources` in the ``coven_desktop.icons``
package (the repository's ``icons/`` folder): setuptools maps it in an editable install and a
wheel, and PyInstaller's importer serves the same names from the bundle, where the build puts
the SVGs under ``coven_desktop/icons`` and the PNGs it rendered under
``coven_desktop/icons/png/<size>/``. Only the bundle ships PNGs; elsewhere Qt renders the SVG.
"""

from __future__ import annotations

from importlib.resources import as_file, files
from pathlib import Path

PACKAGE = "coven_desktop.icons"

_cache: dict[str, Path] = {}


def resource(relative: str) -> Path:
    """The real file of ``relative`` inside the icons package (extracted once where the
    package is not plain files); FileNotFoundError naming it when this installation has none."""
    if relative not in _cache:
        entry = files(PACKAGE).joinpath(*relative.split("/"))
        if not entry.is_file():
            raise FileNotFoundError(f"{relative} is not among this installation's icons")
        with as_file(entry) as path:
            _cache[relative] = Path(path)
    return _cache[relative]


def icon(name: str) -> Path:
    """The path of ``icons/<name>.svg``."""
    return resource(f"{name}.svg")


def icon_png(name: str, size: int) -> Path:
    """The PNG of icon ``name`` rendered at ``size`` pixels (frozen bundles ship them)."""
    return resource(f"png/{size}/{name}.png")


def icon_names() -> list[str]:
    """Every icon this installation ships, by name (``coven``, ``tray-idle``, …)."""
    return sorted(
        entry.name.removesuffix(".svg")
        for entry in files(PACKAGE).iterdir()
        if entry.name.endswith(".svg")
    )
