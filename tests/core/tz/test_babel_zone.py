"""An odd ``TZ`` never ends a command: Babel's local zone falls back to UTC (issue 19)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ODD_TZ = ["/etc/passwd", ":../../etc/shadow", "a" * 300]


@pytest.mark.parametrize("tz", ODD_TZ, ids=["a-file", "a-climb", "300-characters"])
def test_every_command_runs_under_an_odd_tz(tmp_path: Path, tz: str) -> None:
    # A fresh process: Babel reads the zone once, when babel.dates is first imported.
    probe = (
        "import sys\n"
        "from coven_core.cli.main import main\n"
        f"d = {str(tmp_path / 'data')!r}\n"
        "assert main(['--data-dir', d, 'routine', 'add', 'a', '--schedule', 'every 1h',"
        " '--tz', 'Europe/Berlin', '--', '/bin/true']) == 0\n"
        "assert main(['--data-dir', d, 'routine', 'list']) == 0\n"
        "assert main(['--data-dir', d, 'explain', 'a']) == 0\n"
        "assert main(['--data-dir', d, 'routine', 'add', 'b', '--schedule', 'every 1h',"
        " '--tz', 'local', '--', '/bin/true']) == 2\n"
    )
    env = {**os.environ, "TZ": tz}
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          env=env, timeout=60)  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert done.stderr.count("\n") == 1 and "pass an explicit zone" in done.stderr
    assert "Europe/Berlin" in done.stdout
