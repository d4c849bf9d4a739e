"""The import contract between the engine and the app (STYLE.md: Anki's split, in CI)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
FORBIDDEN = {
    "core": ("PySide6", "shiboken6", "qasync", "coven_desktop"),
    "coven_desktop": ("apsw",),
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_package_never_imports_its_forbidden_neighbours(package: str) -> None:
    offenders = []
    for path in sorted((ROOT / package).rglob("*.py")):
        for name in _imports(path):
            if name.split(".")[0] in FORBIDDEN[package]:
                offenders.append(f"{path.relative_to(ROOT)} imports {name}")
    assert offenders == []


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
