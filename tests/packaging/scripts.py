"""The scripts in ``packaging/``, loaded by path: that folder is not a package, and its name
would clash with the ``packaging`` library."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

PACKAGING = Path(__file__).resolve().parents[2] / "packaging"


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        f"coven_packaging_{name}", PACKAGING / f"{name}.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


render_icons = _load("render_icons")
