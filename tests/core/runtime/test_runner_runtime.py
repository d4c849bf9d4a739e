"""The runner runtime on its own: real runners, pooled, forked per attempt, and fresh."""

from __future__ import annotations

import signal
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from coven_core.clock import VirtualClock, WakeSignal
from coven_core.model import FailureClass
from coven_core.runner.journal import append, record
from coven_core.runner.process import boot_id
from coven_core.runtime.base import Exit, Launch, Unfinished
from coven_core.runtime.runner import JOURNAL, RunnerRuntime

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def launch(attempt: str, *argv: str, **options: object) -> Launch:
    return Launch(attempt, "o", "r", argv, None, (), None, **options)  # type: ignore[arg-type]


def next_exit(runtime: RunnerRuntime, wake: WakeSignal) -> Exit:
    with wake.condition:  # real-time: a real runner process reports through the wake signal
        assert wake.condition.wait_for(wake.is_set, timeout=30)
    wake.take()
    (exit_,) = runtime.collect()
    return exit_


DESIGNS = {  # the runners an attempt can have: pooled (the default), its own forked, its own fresh
    "pooled": {},
    "forked": {"pool_idle": None},
    "fresh-interpreter": {"fork_server": False},
}


@pytest.fixture(params=list(DESIGNS))
def runtime(request, tmp_path: Path):  # type: ignore[no-untyped-def]
    wake = WakeSignal()
    built = RunnerRuntime(VirtualClock(NOW), wake, tmp_path / "attempts", **DESIGNS[request.param])
    built.wake = wake  # type: ignore[attr-defined]
    yield built
    built.close()


def test_exit_codes_come_from_the_journal(runtime: RunnerRuntime) -> None:
    runtime.start(launch("a1", "/bin/sh", "-c", "exit 3"))
    exit_ = next_exit(runtime, runtime.wake)  # type: ignore[attr-defined]
    assert (exit_.attempt_id, exit_.exit_code, exit_.classify()) == (
        "a1",
        3,
        FailureClass.ACTION_FAILED,
    )


def test_an_exit_says_how_much_output_its_journal_kept(runtime: RunnerRuntime) -> None:
    runtime.start(launch("a5", "/bin/sh", "-c", "printf hello"))
    assert next_exit(runtime, runtime.wake).stdout_bytes == 5  # type: ignore[attr-defined]
    runtime.start(launch("a6", "/bin/true"))
    assert next_exit(runtime, runtime.wake).stdout_bytes == 0  # type: ignore[attr-defined]


def test_started_names_the_runner_and_its_directory(runtime: RunnerRuntime) -> None:
    started = runtime.start(launch("a2", "/bin/true"))
    assert started.pid and started.process_start
    assert next_exit(runtime, runtime.wake).exit_code == 0  # type: ignore[attr-defined]
    assert Path(started.attempt_dir or "").is_dir()  # a pooled runner makes it as it begins


def test_cancel_stops_the_command(runtime: RunnerRuntime) -> None:
    runtime.start(launch("a3", "/bin/sleep", "30", stop_grace=timedelta(seconds=1)))
    import time

    deadline = time.monotonic() + 10
    journal = Path(runtime._root / "a3" / "journal.jsonl")  # type: ignore[attr-defined]
    while "spawned" not in (journal.read_text() if journal.exists() else ""):
        assert time.monotonic() < deadline
        time.sleep(0.01)  # real-time: waiting for another process to journal its spawn
    assert runtime.cancel("a3")
    exit_ = next_exit(runtime, runtime.wake)  # type: ignore[attr-defined]
    assert exit_.cancelled and exit_.stop_confirmed and exit_.classify() is FailureClass.CANCELLED


def test_a_cancel_the_instant_the_runner_exists_is_a_cancel(runtime: RunnerRuntime) -> None:
    """Found by the app's tests (issue #21): a cancel sent as soon as the runner's pid was
    known reached it before it handled its signals; SIGUSR1's default action killed it, no
    journal was left, and the run awaited a person's decision. The runner is now born with
    its stop signals held, and takes them once it can answer them: nothing ran, cancelled."""
    for number in range(5):  # each a race the old runner could lose
        attempt = f"early{number}"
        runtime.start(launch(attempt, "/bin/sleep", "30", stop_grace=timedelta(seconds=1)))
        assert runtime.cancel(attempt)
        exit_ = next_exit(runtime, runtime.wake)  # type: ignore[attr-defined]
        assert exit_.classify() is FailureClass.CANCELLED, exit_


def test_recover_reads_what_a_finished_runner_left(runtime: RunnerRuntime) -> None:
    started = runtime.start(launch("a4", "/bin/true"))
    next_exit(runtime, runtime.wake)  # type: ignore[attr-defined]
    left = Unfinished("a4", "running", started.attempt_dir, started.pid, started.process_start)
    exit_ = runtime.recover(left, NOW)
    assert exit_ is not None and exit_.exit_code == 0


def test_recover_without_any_evidence_means_nothing_ran(runtime: RunnerRuntime) -> None:
    exit_ = runtime.recover(Unfinished("never", "dispatching", None, None, None), NOW)
    assert exit_ is not None and exit_.classify() is FailureClass.RUNTIME_UNAVAILABLE


def runner_started_only(directory: Path) -> str:
    """An attempt directory whose journal has the runner's start and nothing after it."""
    directory.mkdir(parents=True)
    started = record("runner_started", runner_pid=1, runner_start=1.0, runner_mark=1.0,
                     boot_id="a boot before")  # fmt: skip
    append(directory / JOURNAL, started)
    return str(directory)


def test_no_intent_proves_nothing_ran_within_the_boot_of_the_claim(tmp_path: Path) -> None:
    runtime = RunnerRuntime(VirtualClock(NOW), WakeSignal(), tmp_path, fork_server=False)
    left = Unfinished("a", "dispatching", runner_started_only(tmp_path / "a"), None, None,
                      boot_id())  # fmt: skip
    exit_ = runtime.recover(left, NOW)
    assert exit_ is not None and exit_.classify() is FailureClass.RUNTIME_UNAVAILABLE


@pytest.mark.parametrize("directory", ["with its start", "none"])
def test_after_a_restart_of_the_machine_no_intent_proves_nothing(
    tmp_path: Path, directory: str
) -> None:
    """A runner's records before the outcome are not waited onto the disk: a power cut may
    lose its intent, or its whole journal, while its command had started."""
    runtime = RunnerRuntime(VirtualClock(NOW), WakeSignal(), tmp_path, fork_server=False)
    made = runner_started_only(tmp_path / "a") if directory != "none" else None
    exit_ = runtime.recover(Unfinished("a", "dispatching", made, None, None, "a boot before"), NOW)
    assert exit_ is not None and exit_.classify() is FailureClass.AMBIGUOUS
    assert "the machine has restarted since" in exit_.describe()


def test_after_a_restart_of_the_machine_an_outcome_still_counts(tmp_path: Path) -> None:
    runtime = RunnerRuntime(VirtualClock(NOW), WakeSignal(), tmp_path, fork_server=False)
    made = runner_started_only(tmp_path / "a")
    failed = record("spawn_failed", failure_class="validation", message="no such program")
    append(Path(made) / JOURNAL, failed)
    exit_ = runtime.recover(Unfinished("a", "dispatching", made, None, None, "a boot before"), NOW)
    assert exit_ is not None and exit_.classify() is FailureClass.VALIDATION


@pytest.mark.filterwarnings("error::ResourceWarning")  # its old socket is closed, not leaked
@pytest.mark.filterwarnings("error::pytest.PytestUnraisableExceptionWarning")
def test_a_dead_fork_server_is_replaced(tmp_path: Path) -> None:
    wake = WakeSignal()
    runtime = RunnerRuntime(VirtualClock(NOW), wake, tmp_path / "attempts")
    runtime.start(launch("b1", "/bin/true"))
    next_exit(runtime, wake)
    runtime._server._process.send_signal(signal.SIGKILL)  # type: ignore[union-attr]
    runtime._server._process.wait()  # type: ignore[union-attr]
    runtime.start(launch("b2", "/bin/true"))
    assert next_exit(runtime, wake).exit_code == 0
    runtime.close()
