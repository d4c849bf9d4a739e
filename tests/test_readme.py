"""The README's two commands are the truth, and CI runs exactly the test one."""

from __future__ import annotations

import re
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
