"""The floors of bench_apscheduler (benchmarks.floors): each design does §8's runner work for real."""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path

import apsw
import pytest

from benchmarks.floors import CONCURRENCY, floor_drain, floor_lags
from benchmarks.group_floor import Group

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


@pytest.mark.parametrize("design", ["grouped", "supervised"])
def test_a_group_commit_floor_journals_and_settles_every_attempt_in_one_shared_journal(
    tmp_path: Path, design: str
) -> None:
    floor_drain(tmp_path, 8, design)
    shared = tmp_path / "shared"
    records = [json.loads(line) for line in (shared / "journal.jsonl").read_text().splitlines()]
    by_attempt: dict[int, list[str]] = {}
    for record in records:
        by_attempt.setdefault(record["attempt"], []).append(record["event"])
    assert sorted(by_attempt) == list(range(8))
    assert all(events == ["intent", "spawned", "exited"] for events in by_attempt.values())
    store = apsw.Connection(str(shared / "floor.db"))
    settled = "SELECT count(*) FROM attempts WHERE state = 'settled' AND code = 0"
    assert store.execute(settled).fetchone() == (8,)
    if design == "supervised":  # every command through one supervisor process, not the slots
        runners = {record["runner_pid"] for record in records if record["event"] == "intent"}
        assert len(runners) == 1 and os.getpid() not in runners


def test_the_supervised_lag_floor_measures_each_attempt_it_started(tmp_path: Path) -> None:
    lags = floor_lags(tmp_path, 1000, 1.0, "supervised")
    assert lags and all(0 <= lag < 30 for lag in lags)


def test_a_group_commit_returns_only_once_its_item_is_flushed_and_shares_the_next_flush() -> None:
    batches: list[list[str]] = []
    first_flush_started, release_first = threading.Event(), threading.Event()

    def flush(batch: list[str]) -> None:
        if not batches:
            first_flush_started.set()
            release_first.wait(5)
        batches.append(list(batch))

    group = Group(flush)
    returned: list[str] = []

    def submit(item: str) -> None:
        group.submit(item)
        assert any(item in batch for batch in batches)  # durable before submit returns
        returned.append(item)

    leader = threading.Thread(target=submit, args=("a",))
    leader.start()
    assert first_flush_started.wait(5)
    followers = [threading.Thread(target=submit, args=(item,)) for item in "bcd"]
    for follower in followers:
        follower.start()
    time.sleep(0.2)  # real-time: let the followers queue behind the running flush
    assert returned == []
    release_first.set()
    for thread in (leader, *followers):
        thread.join(5)
    assert batches[0] == ["a"] and sorted(batches[1]) == ["b", "c", "d"] and len(batches) == 2
    assert sorted(returned) == ["a", "b", "c", "d"]


def test_a_failed_group_flush_is_never_reported_as_durable() -> None:
    first_flush_started, release_first = threading.Event(), threading.Event()
    flushed: list[list[str]] = []

    def flush(batch: list[str]) -> None:
        if not flushed:  # the first flush holds the others back, then succeeds
            first_flush_started.set()
            release_first.wait(5)
            flushed.append(batch)
            return
        raise OSError("fsync failed")  # the next, with both followers in it, fails

    group = Group(flush)
    outcomes: dict[str, str] = {}

    def submit(item: str) -> None:
        try:
            group.submit(item)
            outcomes[item] = "durable"
        except (OSError, RuntimeError):
            outcomes[item] = "refused"

    threads = [threading.Thread(target=submit, args=(item,)) for item in "abc"]
    threads[0].start()
    assert first_flush_started.wait(5)
    for thread in threads[1:]:
        thread.start()
    time.sleep(0.2)  # real-time: let both queue behind the first flush
    release_first.set()
    for thread in threads:
        thread.join(5)
    assert outcomes == {"a": "durable", "b": "refused", "c": "refused"}
