"""``make soak`` cut short: it finishes the seeds in hand and prints its tally (real processes)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("stopping", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_soak_prints_what_it_proved(stopping: signal.Signals) -> None:
    soak = subprocess.Popen(
        [sys.executable, "-m", "tests.core.soak", "--seconds", "600", "--steps", "20",
         "--workers", "1"],
        cwd=ROOT, stdout=subprocess.PIPE, text=True,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )  # fmt: skip
    try:
        assert soak.stdout is not None
        lines = [soak.stdout.readline(), soak.stdout.readline()]  # its start, a first seed
        assert lines[1].startswith("seed ") and lines[1].rstrip().endswith("s)"), lines
        began = time.monotonic()
        soak.send_signal(stopping)
        rest, _ = soak.communicate(timeout=60)
    finally:
        soak.kill()
    assert soak.returncode == 0, rest
    assert time.monotonic() - began < 30  # not the 600 s it was given
    assert "soak: stopping after the seeds in hand" in rest
    seeds = 1 + sum(line.startswith("seed ") for line in rest.splitlines())
    assert f"soak: {seeds} seeds × 20 steps = {20 * seeds} strict steps" in rest
    assert rest.rstrip().endswith("violations: 0")
