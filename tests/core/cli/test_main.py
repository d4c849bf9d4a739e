"""``coven``'s entry point: one command's module is loaded, not every command's."""

from __future__ import annotations

import argparse
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from coven_core.cli.main import COMMAND_MODULES, _command_module, build_parser


@pytest.mark.parametrize("module", sorted(COMMAND_MODULES))
def test_the_table_names_exactly_what_each_module_registers(module: str) -> None:
    commands = argparse.ArgumentParser().add_subparsers()
    importlib.import_module(f"coven_core.cli.{module}").register(commands)
    assert tuple(commands.choices) == COMMAND_MODULES[module]


@pytest.mark.parametrize(
    ("argv", "module"),
    [
        (["status"], "status_cmd"),
        (["--data-dir", "/x", "status", "--json"], "status_cmd"),
        (["--data-dir=/x", "run-now", "r"], "run_cmd"),
        (["--help"], None),
        (["statuz"], None),
        ([], None),
    ],
)
def test_the_command_word_picks_its_module(argv: list[str], module: str | None) -> None:
    assert _command_module(argv) == module


def test_help_and_typos_still_list_every_command() -> None:
    listed = build_parser(["--help"])._subparsers._group_actions[0].choices  # type: ignore[union-attr]
    assert list(listed) == [name for names in COMMAND_MODULES.values() for name in names]


# What a read-only ``coven status`` must not load: the engine's heavy parts, and modules whose
# import alone is a visible share of a fresh process's start (issue #9: ``dataclasses`` brings
# ``inspect``, ``logging`` ~8 ms, the model's enums ~8 ms), so the records on that path are
# NamedTuples and those imports wait for the code that needs them.
NOT_FOR_STATUS = (
    "coven_core.scheduling.scheduler", "coven_core.runtime.runner", "coven_core.integrity.doctor",
    "coven_core.operator", "coven_core.schedule.rrule", "coven_core.views.attention",
    "coven_core.model", "coven_core.scheduling.routines", "dataclasses", "inspect", "logging", "json",
)  # fmt: skip


@pytest.mark.parametrize(("output", "needed"), [([], set()), (["--json"], {"json"})])
def test_status_loads_nothing_it_does_not_use(
    tmp_path: Path, output: list[str], needed: set[str]
) -> None:
    probe = (
        "import sys\n"
        "from coven_core.cli.main import main\n"
        f"main(['status', '--data-dir', {str(tmp_path / 'data')!r}, *{output!r}])\n"
        f"print(sorted(set({NOT_FOR_STATUS!r}) - {needed!r} & set(sys.modules)))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=True, timeout=60)  # fmt: skip
    assert done.stdout.strip().splitlines()[-1] == "[]"
