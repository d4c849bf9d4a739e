"""``coven … | head -1`` and Ctrl-C (issue 19, part 2): a reader that leaves early is no error,
and an interrupted command says so in one line, exits 130 and leaves nothing half-written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from coven_core.cli import arguments
from coven_core.system import failpoints
from tests.core.cli.conftest import Coven

YEARLY = ("--schedule", "0 0 1 1 *", "--tz", "UTC")


def coven_into_a_closed_pipe(data_dir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """A real ``coven`` whose reader is gone before it writes: ``| head -0``, made exact."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    argv = [sys.executable, "-m", "coven_core.cli.main", "--data-dir", str(data_dir), *args]
    try:
        return subprocess.run(argv, stdout=write_end, stderr=subprocess.PIPE, text=True,
                              timeout=60, check=False)  # fmt: skip
    finally:
        os.close(write_end)


@pytest.mark.parametrize(
    "args",
    [["history", "backup"], ["status"], ["audit", "--json"], ["routine", "list", "--json"]],
)
def test_a_reader_that_left_is_no_error(coven: Coven, args: list[str]) -> None:
    coven.add("backup", *YEARLY)
    coven.json("run-now", "backup")
    done = coven_into_a_closed_pipe(coven.data_dir, *args)
    assert (done.returncode, done.stderr) == (0, "")


def test_run_now_into_a_closed_pipe_still_makes_its_run(coven: Coven) -> None:
    """The run was planned before the first word was printed: 0 says what happened. (The
    one line on stderr is the note that no scheduler runs on this store.)"""
    coven.add("backup", *YEARLY)
    done = coven_into_a_closed_pipe(coven.data_dir, "run-now", "backup")
    assert done.returncode == 0
    assert done.stderr.startswith("coven run-now: no scheduler is running")
    assert done.stderr.count("\n") == 1
    (row,) = coven.json("history", "backup")["occurrences"]
    assert "@manual~" in row["occurrence_id"]


def test_a_closed_pipe_keeps_the_commands_own_status(coven: Coven) -> None:
    coven.new_store()
    done = coven_into_a_closed_pipe(coven.data_dir, "routine", "show", "nobody")
    assert done.returncode == 2
    assert done.stderr.startswith("coven routine show: no routine named 'nobody'")


# -- Ctrl-C ---------------------------------------------------------------------------------
def interrupt() -> None:
    raise KeyboardInterrupt


@pytest.mark.parametrize("args", [["status"], ["history", "backup"], ["audit"], ["run-now", "x"]])
def test_ctrl_c_while_opening_the_store(
    coven: Coven, monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    coven.add("backup", *YEARLY)
    monkeypatch.setattr(arguments, "open_engine", lambda _data_dir, **_options: interrupt())
    assert coven(*args) == (130, "", "coven: interrupted\n")


def test_ctrl_c_inside_a_command_leaves_nothing_half_written(
    coven: Coven, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Interrupted just before its transaction commits, ``run-now`` stores nothing: no run,
    no event, no audit entry."""
    coven.add("backup", *YEARLY)
    before, audited = coven.snapshot(), coven.json("audit")

    def hit(name: str) -> None:
        if name == "revision.before_commit":
            interrupt()

    monkeypatch.setattr(failpoints, "hit", hit)
    assert coven("run-now", "backup") == (130, "", "coven: interrupted\n")
    monkeypatch.undo()
    assert coven.snapshot() == before
    assert coven.json("audit") == audited


def test_ctrl_c_is_one_line_in_a_real_process(tmp_path: Path) -> None:
    """No traceback from the interpreter either: the status and the line are all there is."""
    probe = (
        "import sys\n"
        "from coven_core.cli import arguments, main\n"
        "def interrupted(_data_dir, **_options): raise KeyboardInterrupt\n"
        "arguments.open_engine = interrupted\n"
        f"sys.exit(main.main(['--data-dir', {str(tmp_path)!r}, 'status']))\n"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          timeout=60, check=False)  # fmt: skip
    assert (done.returncode, done.stdout, done.stderr) == (130, "", "coven: interrupted\n")
