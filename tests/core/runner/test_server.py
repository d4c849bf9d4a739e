"""The runner fork server: a spare child, already forked, takes the next attempt; nothing is
left behind when the engine closes the server."""

from __future__ import annotations

from pathlib import Path

import psutil

from coven_core.runner.journal import read_journal
from coven_core.runner.spec import RunnerSpec
from coven_core.runtime.forkserver import ForkServer
from coven_core.runtime.runner import waiter

WAIT = 30.0


def attempt(root: Path, name: str) -> Path:
    directory = root / name
    directory.mkdir()
    (directory / "spec.json").write_text(RunnerSpec(name, ("/bin/true",)).to_json())
    return directory


def the_server(server: ForkServer) -> psutil.Process:
    assert server._process is not None
    return psutil.Process(server._process.pid)


def test_each_request_is_run_by_a_runner_of_its_own_and_one_spare_waits(tmp_path: Path) -> None:
    server = ForkServer()
    try:
        runners = []
        for name in ("a1", "a2", "a3"):
            directory = attempt(tmp_path, name)
            pid = server.spawn(directory)
            waiter(pid)()  # a pidfd: the runner is the server's child, not ours
            journal = read_journal(directory / "journal.jsonl")
            assert journal.runner_pid == pid and journal.exit is not None
            assert journal.exit.exit_code == 0
            runners.append(pid)
        assert len(set(runners)) == 3
        spares = the_server(server).children()
        assert len(spares) == 1 and spares[0].pid not in runners
    finally:
        spare = the_server(server).children()
        server.close()
    gone, alive = psutil.wait_procs(spare, timeout=WAIT)
    assert alive == [] and len(gone) == 1  # the spare left at end of file, running nothing


def test_a_dead_spare_is_replaced_on_the_spot(tmp_path: Path) -> None:
    server = ForkServer()
    try:
        first = attempt(tmp_path, "a1")
        waiter(server.spawn(first))()
        spare = the_server(server).children()[0]
        spare.kill()
        spare.wait(WAIT)
        second = attempt(tmp_path, "a2")
        pid = server.spawn(second)
        assert pid != spare.pid
        waiter(pid)()
        assert read_journal(second / "journal.jsonl").exit is not None
    finally:
        server.close()
