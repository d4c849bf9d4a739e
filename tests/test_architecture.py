"""The import contract between the engine and the app (STYLE.md: Anki's split, in CI)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_the_import_contracts_hold(tmp_path: Path) -> None:
    """pyproject's [tool.importlinter] contracts: the engine never imports the app or Qt, the
    app reaches only the engine's public surface and never apsw, the engine is layered."""
    code = (
        "from importlinter.cli import lint_imports\n"
        f"raise SystemExit(lint_imports(config_filenames=({str(ROOT / 'pyproject.toml')!r},),"
        f" cache_dir={str(tmp_path)!r}, no_logo=True))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr


def test_importing_every_engine_module_loads_no_qt() -> None:
    modules = [
        "coven_core." + ".".join(p.relative_to(ROOT / "core").with_suffix("").parts)
        for p in sorted((ROOT / "core").rglob("*.py"))
        if p.name not in ("__init__.py", "__main__.py")
    ]
    code = (
        "import importlib, sys\n"
        f"for m in {modules!r}: importlib.import_module(m)\n"
        "bad = [m for m in sys.modules if m.split('.')[0] in ('PySide6', 'qasync', 'coven_desktop')]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_every_engine_package_is_in_the_wheel() -> None:
    import tomllib

    listed = set(
        tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    )
    found = {
        ".".join(("coven_core", *p.parent.relative_to(ROOT / "core").parts))
        for p in (ROOT / "core").rglob("__init__.py")
    } | {
        ".".join(p.parent.relative_to(ROOT).parts)
        for p in (ROOT / "coven_desktop").rglob("__init__.py")
    }
    assert found <= listed
