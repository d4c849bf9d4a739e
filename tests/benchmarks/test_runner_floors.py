"""The runner floors of bench_apscheduler: each design does §8's runner work for real."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.bench_apscheduler import CONCURRENCY, floor_drain, floor_lags

EVENTS = ["runner_started", "intent", "spawned", "exited"]


def _journals(directory: Path) -> list[list[dict[str, object]]]:
    return [
        [json.loads(line) for line in path.read_text().splitlines()]
        for path in sorted(directory.glob("w*/*/journal.jsonl"))
    ]


@pytest.mark.parametrize("design", ["forked", "pooled"])
def test_every_attempt_of_a_runner_floor_is_journaled_by_a_runner_process(
    tmp_path: Path, design: str
) -> None:
    floor_drain(tmp_path, 8, design)
    journals = _journals(tmp_path)
    assert len(journals) == 8
    assert all([record["event"] for record in journal] == EVENTS for journal in journals)
    runners = {journal[0]["runner_pid"] for journal in journals}
    # Forked: a runner per attempt. Pooled: one per slot, each serving its slot's attempts.
    assert len(runners) == (8 if design == "forked" else CONCURRENCY)


def test_the_pooled_lag_floor_measures_each_attempt_it_started(tmp_path: Path) -> None:
    lags = floor_lags(tmp_path, 1000, 1.0, "pooled")  # 20 due each second
    assert lags and all(0 <= lag < 30 for lag in lags)
