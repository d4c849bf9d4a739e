"""Assets, found the same way in an editable install, a wheel and a frozen bundle."""

from __future__ import annotations

from importlib.resources import as_file, files
from pathlib import Path

_cache: dict[str, Path] = {}


def icon(name: str) -> Path:
    """The path of ``icons/<name>.svg`` (a real file even when packaged in an archive)."""
    if name not in _cache:
        resource = files("coven_desktop.icons").joinpath(f"{name}.svg")
        with as_file(resource) as path:  # extracted once where it is not a plain file
            _cache[name] = Path(path)
    return _cache[name]
