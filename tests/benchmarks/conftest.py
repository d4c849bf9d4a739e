"""The benchmark modules' tests: each runs its module small, in the test's temp dir."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from benchmarks import harness, suite
from benchmarks.harness import Figure


@pytest.fixture(autouse=True)
def _scratch_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Measured runs write in the test's temp dir, not the checkout's build/scratch (which
    the suite empties at its end)."""
    monkeypatch.setattr(harness, "SCRATCH", tmp_path / "scratch")
    monkeypatch.setenv(harness.KEEP_SCRATCH, "1")  # pytest removes tmp_path


def judged_rows(module: str, figures: list[Figure]) -> list[Figure]:
    """The rows with a target: they are the suite's expected rows for ``module``, in order,
    each with a ratio measured against its baseline."""
    judged = [figure for figure in figures if figure.passed is not None]
    assert [figure.name for figure in judged] == list(suite.EXPECTED[module])
    for figure in judged:
        assert figure.ours > 0 and figure.baseline > 0, figure
        assert math.isfinite(figure.ratio) and figure.ratio > 0, figure
        assert figure.baseline_name, figure
    return judged
