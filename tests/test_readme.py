"""The README's two commands are the truth, and CI runs exactly the test one."""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"```sh\n(.*?)```", readme, re.S)
    assert block, "the README must open with a sh block of commands"
    return [line for line in block[1].splitlines() if line.strip()]


def test_readme_leads_with_exactly_two_commands() -> None:
    run_app, run_tests = _commands()
    assert run_app.endswith("coven-desktop")
    assert "pytest" in run_tests


def test_ci_runs_the_readme_test_command() -> None:
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    assert _commands()[1] in ci


def test_every_picture_the_readme_shows_is_there() -> None:
    import re

    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    pictures = re.findall(r"\((docs/pictures/[^)]+\.png)\)", readme)
    assert len(pictures) >= 12
    missing = [p for p in pictures if not (ROOT / p).is_file()]
    assert missing == [], "run make pictures"


def test_no_test_needs_a_package_the_readme_test_command_does_not_install() -> None:
    """The README's test command installs ``.[test]``. A test importing a benchmark module that
    imports APScheduler (the ``bench`` extra) fails to collect on a fresh machine, while passing
    on any machine where ``.[dev]`` was once installed: so this reads the imports instead."""
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    extras = extras["project"]["optional-dependencies"]
    missing = {_import_name(r) for r in extras["bench"]} - {_import_name(r) for r in extras["test"]}
    assert missing, "the bench extra brings nothing the tests lack: update this test"
    reached = {
        (test.relative_to(ROOT).as_posix(), package)
        for test in (ROOT / "tests").rglob("*.py")
        for package in _packages_reached(test) & missing
    }
    assert reached == set(), "import these where the benchmark runs, not where a test does"


def _import_name(requirement: str) -> str:
    return re.split(r"[<>=!~\[; ]", requirement, maxsplit=1)[0].lower().replace("-", "_")


def _packages_reached(path: Path, seen: set[Path] | None = None) -> set[str]:
    """The top-level packages ``path`` imports, following the project's own ``benchmarks``
    and ``tests`` modules (the engine and the app are checked by their own dependencies)."""
    seen = set() if seen is None else seen
    seen.add(path)
    packages: set[str] = set()
    for name in _imported(path):
        packages.add(name.split(".")[0])
        module = _local_module(name)
        if module is not None and module not in seen:
            packages |= _packages_reached(module, seen)
    return packages


def _imported(path: Path) -> list[str]:
    names: list[str] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names += [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
    return names


def _local_module(name: str) -> Path | None:
    if name.split(".")[0] not in ("benchmarks", "tests"):
        return None
    base = ROOT.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None
