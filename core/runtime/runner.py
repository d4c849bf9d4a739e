"""The runner runtime: every attempt through a runner process that outlives the app (§8).

``start`` hands the attempt's spec and the name of its directory to a pooled runner
(``runtime.pool``: a runner forked once that takes attempts one after another, makes each
one's directory and says when each ends). Without the fork server it writes the attempt's
directory and ``spec.json`` and starts ``python -m coven_core.runner DIR`` for the attempt
alone, in its own session, and a thread waits for that runner to end (a child: ``wait``; an
adopted runner from an earlier process: a pidfd, no polling). Either way the
attempt's journal becomes its :class:`~coven_core.runtime.base.Exit`. After a restart,
:meth:`recover` settles what a journal already proves, adopts a runner that is still alive —
identified by pid *and* process start time — or reads what its journal says.

An idempotent routine's runner gone without an outcome while its command runs on leaves an
attempt that is not over: the command is watched as a runner is (an *orphan*), and the attempt
ends when it ends, its outcome unknown (no runner saw the exit), once whatever it left in its
process group is stopped, as its runner would have stopped it. Settled at once, its automatic
retry would run a second copy beside it (DESIGN §8). Its timeout was the runner's to enforce:
it still holds, and the runtime stops the process group once it has passed, as a cancel does.
Any other routine's attempt is settled at once: a person decides, and no decision is taken
while the command lives.
"""

from __future__ import annotations

import math
import os
import queue
import select
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from pathlib import Path

from coven_core.clock import Clock, WakeReason, WakeSignal
from coven_core.model import FailureClass
from coven_core.runner.journal import Journal, read_journal, utc_now, write_all
from coven_core.runner.process import (
    boot_id,
    end_group,
    group_of,
    is_running,
    start_mark,
    unrecorded_commands,
)
from coven_core.runner.spec import CANCEL_FILE, DEFAULT_STOP_GRACE_SECONDS, RunnerSpec
from coven_core.runner.stops import holding_stops
from coven_core.runtime.base import Exit, Launch, LaunchError, Started, Unfinished
from coven_core.runtime.forkserver import ForkServer
from coven_core.runtime.pool import IDLE_SECONDS, RunnerPool

JOURNAL, SPEC = "journal.jsonl", "spec.json"
RESTARTED_SINCE = (
    "the machine has restarted since, and a journal reaches the disk only with its outcome: "
    "nothing proves the command did not start"
)
OUTPUT_CAP_BYTES = 10 * 1024 * 1024


def runner_command() -> list[str]:
    """How to start a runner: this interpreter, or the frozen bundle's own executable."""
    if getattr(sys, "frozen", False):
        return [sys.executable, "--coven-runner"]
    return [sys.executable, "-m", "coven_core.runner"]


@dataclass
class _Watched:
    pid: int
    start: float | None
    directory: Path
    ended: threading.Event = field(default_factory=threading.Event)
    idempotent: bool = False  # the routine's: its runner's orphan is watched (module docstring)
    timeout: float | None = None  # the attempt's, in seconds: its runner's to enforce, or ours
    orphan: bool = False  # the command itself: its runner is gone
    stopped: threading.Event | None = None  # an orphan's stop, once asked for: set when done
    stop_confirmed: bool = False  # whether nothing of the orphan's group was left after it
    timed_out: bool = False  # an orphan stopped because its timeout passed


class RunnerRuntime:
    def __init__(
        self,
        clock: Clock,
        wake: WakeSignal,
        attempts_root: Path,
        *,
        fork_server: bool = True,
        pool_idle: float | None = IDLE_SECONDS,
    ) -> None:
        """``pool_idle`` None: a runner of its own for each attempt, even with the fork
        server (the design before pooled runners, kept for comparison and as a fallback)."""
        self._clock, self._wake, self._root = clock, wake, attempts_root
        self._server = ForkServer() if fork_server else None
        self._pool = None
        if self._server is not None and pool_idle is not None:
            self._pool = RunnerPool(self._server, self._pooled_end, _start_mark, pool_idle)
        self._exits: queue.Queue[Exit] = queue.Queue()
        self._watched: dict[str, _Watched] = {}
        self._lock = threading.Lock()
        self._root_exists = False

    # -- starting ---------------------------------------------------------------------------
    def start(self, launch: Launch) -> Started:
        directory = self._root / launch.attempt_id
        watched = self._hand_to_pool(launch, directory)
        if watched is None:
            self._prepare(launch, directory)
            pid, wait = self._spawn(directory)
            watched = _Watched(pid, _start_mark(pid), directory, idempotent=launch.idempotent,
                               timeout=_seconds(launch.timeout))  # fmt: skip
            self._watch(launch.attempt_id, watched, wait)
        return Started(watched.pid, watched.start, str(directory), boot_id())

    def _hand_to_pool(self, launch: Launch, directory: Path) -> _Watched | None:
        """The attempt in a pooled runner's hands, watched; None when no runner took it."""
        if self._pool is None or not self._root_made():
            return None
        attempt_id, spec = launch.attempt_id, _spec_of(launch).to_json(indent=None)
        for _ in range(3):  # a runner found gone ran nothing: the attempt goes to another
            runner = self._pool.acquire()
            if runner is None:
                return None
            watched = _Watched(runner.pid, runner.mark, directory, idempotent=launch.idempotent,
                               timeout=_seconds(launch.timeout))  # fmt: skip
            with self._lock:  # before the hand-over: its end may come at once
                self._watched[attempt_id] = watched
            if self._pool.run(runner, attempt_id, directory, spec):
                return watched
            with self._lock:
                self._watched.pop(attempt_id, None)
        return None

    def _spawn(self, directory: Path) -> tuple[int, Callable[[], object]]:
        """Through the fork server when it answers, else a fresh interpreter."""
        if self._server is not None:
            try:
                pid = self._server.spawn(directory)
                return pid, waiter(pid)
            except OSError:
                pass  # fall back: slower, never less safe
        try:
            with holding_stops():  # the runner is born holding them (runner.stops)
                process = subprocess.Popen(
                    [*runner_command(), str(directory)], start_new_session=True,
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                )  # fmt: skip
        except OSError as error:
            raise LaunchError(FailureClass.RUNTIME_UNAVAILABLE, f"runner: {error}") from None
        return process.pid, process.wait

    def _root_made(self) -> bool:
        """The attempts' folder exists (made once: a pooled runner makes each attempt's)."""
        if not self._root_exists:
            try:
                self._root.mkdir(mode=0o700, parents=True, exist_ok=True)
            except OSError:
                return False  # a runner of its own then says why (_prepare)
            self._root_exists = True
        return True

    def _prepare(self, launch: Launch, directory: Path) -> None:
        """A runner of its own: the attempt's directory and ``spec.json``, made here."""
        try:
            self._root.mkdir(mode=0o700, parents=True, exist_ok=True)
            os.mkdir(directory, 0o700)
            _write_spec(directory / SPEC, _spec_of(launch).to_json())
        except OSError as error:
            raise LaunchError(
                FailureClass.RUNTIME_UNAVAILABLE, f"cannot prepare {directory}: {error}"
            ) from None

    # -- watching ---------------------------------------------------------------------------
    def _watch(self, attempt_id: str, watched: _Watched, wait: Callable[[], object]) -> None:
        """A runner of the attempt's own: a thread waits for the process to end."""
        thread = threading.Thread(
            target=self._await_end, args=(attempt_id, watched, wait),
            name=f"coven-runner-{attempt_id}", daemon=True,
        )  # fmt: skip
        with self._lock:
            self._watched[attempt_id] = watched
        thread.start()

    def _await_end(self, attempt_id: str, watched: _Watched, wait: Callable[[], object]) -> None:
        wait()
        self._ended(attempt_id, watched)

    def _pooled_end(self, attempt_id: str, not_started: str | None) -> None:
        """A pooled runner is done with the attempt (or gone while it ran it); with
        ``not_started``, it could not begin it and says why."""
        with self._lock:
            watched = self._watched.get(attempt_id)
        if watched is not None:
            self._ended(attempt_id, watched, not_started)

    def _ended(self, attempt_id: str, watched: _Watched, not_started: str | None = None) -> None:
        now = self._clock.now_utc()
        if not_started is not None:  # the runner's word: no directory, no journal, nothing ran
            exit_ = Exit(attempt_id, now, failure_class=FailureClass.RUNTIME_UNAVAILABLE,
                         message=not_started)  # fmt: skip
        elif watched.stopped is not None:  # an orphan stopped by a cancel or its timeout: as a
            watched.stopped.wait()  # runner says it
            exit_ = Exit(attempt_id, now, cancelled=not watched.timed_out,
                         timed_out=watched.timed_out, stop_confirmed=watched.stop_confirmed,
                         command_pid=watched.pid)  # fmt: skip
        else:
            journal = _journal_of(watched.directory, started=True, boot=None)  # watched: this boot
            orphan = watched.idempotent and self._follow_orphan(
                attempt_id, watched.directory, journal, watched.timeout
            )
            if orphan:
                watched.ended.set()
                return  # not over: its command runs on, and its end will come
            if watched.orphan:  # as its runner would: nothing of the attempt outlives it
                end_group(group_of(watched.pid), DEFAULT_STOP_GRACE_SECONDS)  # (gone: no wait)
            exit_ = exit_from_journal(attempt_id, journal, now, ran_on=watched.orphan)
        self._exits.put(exit_)
        with self._lock:
            self._watched.pop(attempt_id, None)
        watched.ended.set()
        self._wake.set(WakeReason.RUN_FINISHED)

    def collect(self) -> list[Exit]:
        exits = []
        while True:
            try:
                exits.append(self._exits.get_nowait())
            except queue.Empty:
                return exits

    def active(self) -> int:
        with self._lock:
            return len(self._watched)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.close()  # a busy runner finishes its attempt, then exits
        if self._server is not None:
            self._server.close()

    def drain(self, timeout: float) -> None:
        """Wait up to ``timeout`` seconds in all for the attempts to end; the rest keep
        running and are adopted by the next start."""
        deadline = self._clock.monotonic() + timeout
        with self._lock:
            running = list(self._watched.values())
        for watched in running:
            watched.ended.wait(max(0.0, deadline - self._clock.monotonic()))

    # -- after a restart --------------------------------------------------------------------
    def recover(self, attempt: Unfinished, now: datetime) -> Exit | None:
        with self._lock:
            if attempt.attempt_id in self._watched:
                return None  # one of ours, still running: its end is on its way
        directory = Path(attempt.attempt_dir or self._root / attempt.attempt_id)
        journal = read_journal(directory / JOURNAL)
        if journal.outcome_known:  # whatever its runner does now (a pooled one lives on)
            return exit_from_journal(attempt.attempt_id, journal, now)
        pid = attempt.runner_pid or journal.runner_pid
        start = attempt.runner_start or journal.runner_mark
        if pid is not None and is_alive(pid, start, attempt.boot_id or journal.boot_id):
            watched = _Watched(pid, start, directory, idempotent=attempt.idempotent,
                               timeout=attempt.timeout_seconds)  # fmt: skip
            self._watch(attempt.attempt_id, watched, waiter(pid))
            return None
        started = attempt.state == "running"
        journal = _journal_of(directory, started=started, boot=attempt.boot_id)
        timeout = attempt.timeout_seconds
        if attempt.idempotent and self._follow_orphan(attempt.attempt_id, directory, journal,
                                                      timeout):  # fmt: skip
            return None  # adopted, as a live runner is
        return exit_from_journal(attempt.attempt_id, journal, now)

    def _follow_orphan(
        self, attempt_id: str, directory: Path, journal: Journal, timeout: float | None
    ) -> bool:
        """Watch an idempotent routine's command if its runner is gone without an outcome and
        the command still lives (its recorded pid and start, else its tag); whether it does.
        Its timeout holds: its runner is not there to enforce it."""
        if journal.outcome_known:
            return False
        command = _live_command(journal, attempt_id)
        if command is None:
            return False
        pid, mark = command
        orphan = _Watched(pid, mark, directory, idempotent=True, timeout=timeout, orphan=True)
        self._watch(attempt_id, orphan, self._orphan_waiter(orphan, _time_left(journal, timeout)))
        return True

    def _orphan_waiter(self, orphan: _Watched, left: float | None) -> Callable[[], object]:
        """Wait for the orphan's end; once its timeout has passed, stop its group as its
        runner would have (SIGTERM, then SIGKILL after the grace), unless a cancel did."""
        ends = waiter(orphan.pid, left)

        def wait() -> None:
            if ends():
                return
            with self._lock:
                if orphan.stopped is None:  # else a cancel came first, and stops it
                    orphan.timed_out = True
                    _stop_orphan(orphan)

        return wait

    def locate(self, attempt: Unfinished) -> Unfinished:
        """A crash between the runner's start and its record leaves the row without the
        directory and the runner's identity; the directory's name and journal give them."""
        if attempt.attempt_dir is not None and attempt.runner_pid is not None:
            return attempt
        directory = Path(attempt.attempt_dir or self._root / attempt.attempt_id)
        if not directory.is_dir():
            return attempt
        journal = read_journal(directory / JOURNAL)
        return replace(
            attempt, attempt_dir=str(directory),
            runner_pid=attempt.runner_pid or journal.runner_pid,
            runner_start=attempt.runner_start or journal.runner_mark,
            boot_id=attempt.boot_id or journal.boot_id,
        )  # fmt: skip

    # -- cancelling -------------------------------------------------------------------------
    def cancel(self, attempt_id: str) -> bool:
        """SIGUSR1 asks the runner to stop the command's whole group (polite, then forced);
        the cancel file first, which fences the signal to this attempt (``runner.pool``)."""
        with self._lock:
            watched = self._watched.get(attempt_id)
        if watched is None or not is_alive(watched.pid, watched.start):
            return False
        if watched.orphan:  # no runner to ask: its group, as the runner would stop it
            with self._lock:
                if watched.stopped is None:
                    _stop_orphan(watched)
            return True
        return signal_cancel(watched.pid, watched.directory)


def signal_cancel(runner_pid: int, directory: str | os.PathLike[str]) -> bool:
    """Write the attempt's cancel file, then send its runner SIGUSR1; False if either
    cannot be done (the runner or the directory is gone)."""
    try:
        # A pooled runner makes the directory as it begins the attempt: a cancel may come
        # first, and the runner reads the file as it begins (runner.main._make_directory).
        os.makedirs(directory, mode=0o700, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)
        os.close(os.open(os.path.join(directory, CANCEL_FILE), flags, 0o600))
        os.kill(runner_pid, signal.SIGUSR1)
    except (FileNotFoundError, ProcessLookupError):
        return False
    return True


def _journal_of(directory: Path, *, started: bool, boot: str | None) -> Journal:
    """The journal — and a journal that proves nothing when it cannot prove that nothing
    ran: *no intent* must mean "nothing ran", never "the evidence was deleted" (it is gone
    although a runner was started) nor "the evidence never reached the disk" (the machine
    has restarted since ``boot``, the one the attempt was claimed in: ``runner.journal``)."""
    path = directory / JOURNAL
    if started and not path.exists():
        return Journal(intent=True, problems=(f"the journal {path} is gone",))
    journal = read_journal(path)
    if journal.outcome_known or journal.intent or boot is None or boot == boot_id():
        return journal
    return replace(journal, intent=True, problems=(*journal.problems, RESTARTED_SINCE))


def _stopped_from_outside(journal: Journal) -> str | None:
    """A stop that was not the engine's cancel (SIGUSR1) came from outside Coven — the
    session ending, a shutdown, someone's ``kill`` — and says so: it was nobody's cancel."""
    sent = journal.stop_signal
    if sent is None or sent == signal.SIGUSR1:
        return None
    try:
        name = signal.Signals(sent).name
    except ValueError:
        name = f"signal {sent}"
    return f"stopped from outside Coven ({name} to its runner)"


def _live_command(journal: Journal, attempt_id: str) -> tuple[int, float | None] | None:
    """The attempt's command if it still lives: the one its journal names, else one found by
    its tag (a runner gone between the spawn and its record); its pid and start mark."""
    if journal.command_pid is not None:
        alive = is_alive(journal.command_pid, journal.command_mark, journal.boot_id)
        return (journal.command_pid, journal.command_mark) if alive else None
    for pid, start in unrecorded_commands(journal, attempt_id).items():
        return pid, start.mark
    return None


def _stop_orphan(watched: _Watched) -> None:
    """A cancel: stop the command's process group as its runner would have, on a thread of
    its own, with the runner's default grace (the routine's own was in the runner's memory).
    The attempt then ends as cancelled, the stop confirmed when nothing of the group was
    left."""
    done, group = threading.Event(), group_of(watched.pid)

    def stop() -> None:
        try:
            watched.stop_confirmed = end_group(group, DEFAULT_STOP_GRACE_SECONDS) is not None
        finally:
            done.set()

    watched.stopped = done
    threading.Thread(target=stop, name="coven-orphan-stop", daemon=True).start()


def exit_from_journal(
    attempt_id: str, journal: Journal, now: datetime, *, ran_on: bool = False
) -> Exit:
    """What the evidence proves: an exit, a failed spawn, nothing ran, or unknown. ``ran_on``:
    the runner was gone and its command, watched, has ended since (its status unknown)."""
    if journal.exit is not None:
        record = journal.exit
        return Exit(
            attempt_id, record.at, record.exit_code, record.signal, None,
            _stopped_from_outside(journal) if record.cancelled and record.stop_confirmed else None,
            record.cancelled, record.timed_out, record.stop_confirmed, journal.command_pid,
            record.stdout_bytes,
        )  # fmt: skip
    if journal.spawn_failure is not None:
        failure = FailureClass(journal.spawn_failure.failure_class)
        return Exit(attempt_id, now, failure_class=failure, message=journal.spawn_failure.message)
    if not journal.intent:
        nothing_ran = "the runner ended before it started the command; nothing ran"
        return Exit(attempt_id, now, failure_class=FailureClass.RUNTIME_UNAVAILABLE,
                    message=nothing_ran)  # fmt: skip
    detail = f" ({'; '.join(journal.problems)})" if journal.problems else ""
    unknown = f"the runner is gone and its journal shows no outcome{detail}"
    if ran_on:
        unknown = ("the runner was lost while its command ran; the command ran on and has "
                   f"ended, its exit status unknown{detail}")  # fmt: skip
    return Exit(attempt_id, now, failure_class=FailureClass.AMBIGUOUS,
                command_pid=journal.command_pid, message=unknown)  # fmt: skip


def is_alive(pid: int, mark: float | None, boot: str | None = None) -> bool:
    """The same process, not just the same pid: a reused pid has another start mark. Without
    a recorded mark nothing is proven, so the answer is no (and evidence decides)."""
    return mark is not None and is_running(pid, mark, boot)


def waiter(pid: int, timeout: float | None = None) -> Callable[[], bool]:
    """Block until a process that is not our child ends (True), or ``timeout`` seconds have
    passed first (False): a pidfd where Linux has one."""
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return lambda: _psutil_wait(pid, timeout)

    def wait() -> bool:
        try:
            descriptor = opener(pid)
        except OSError:
            return True  # already gone
        try:
            poller = select.poll()
            poller.register(descriptor, select.POLLIN)
            return bool(poller.poll(None if timeout is None else math.ceil(timeout * 1000)))
        finally:
            os.close(descriptor)

    return wait


def _psutil_wait(pid: int, timeout: float | None) -> bool:
    import psutil  # here, not at the top: see _start_mark

    try:
        psutil.Process(pid).wait(timeout)
    except psutil.TimeoutExpired:
        return False
    except psutil.Error:
        pass
    return True


def _time_left(journal: Journal, timeout: float | None) -> float | None:
    """Seconds left of an orphan's timeout, counted from its command's spawn as its runner
    counted (by the wall clock here: the runner's own clock went with it); the whole timeout
    for a command its journal does not name. None: no limit."""
    if timeout is None:
        return None
    if journal.spawned_at is None:
        return timeout
    return max(0.0, timeout - (utc_now() - journal.spawned_at).total_seconds())


def _seconds(duration: timedelta | None) -> float | None:
    return None if duration is None else duration.total_seconds()


def _start_mark(pid: int) -> float | None:
    try:
        return start_mark(pid)
    except Exception as error:
        # psutil is loaded only by start_mark's fallback, the one path that raises its errors:
        # a tray that has not run a command yet never loads it (bench_idle: "idle tray app:
        # RSS" and "launch to tray ready").
        import psutil

        if isinstance(error, psutil.Error):
            return None
        raise


def _spec_of(launch: Launch) -> RunnerSpec:
    return RunnerSpec(
        attempt_id=launch.attempt_id,
        argv=launch.argv,
        cwd=launch.cwd,
        env=launch.env,
        shell=launch.shell,
        timeout_seconds=None if launch.timeout is None else launch.timeout.total_seconds(),
        stop_grace_seconds=launch.stop_grace.total_seconds(),
        output_cap_bytes=OUTPUT_CAP_BYTES,
    )


def _write_spec(path: Path, text: str) -> None:
    """Write the runner's input into the attempt's new directory, without fsync and without
    a temporary file.

    The spec is input, not evidence: only the runner reads it, from the page cache, and only
    once it is handed the directory, after this returns: it never sees a part of it. What §8
    makes durable is the journal — the runner fsyncs the attempt directory when it creates the
    journal and every record before and after the spawn — and recovery reads only that. After
    a crash a partial or lost spec can only belong to an attempt whose runner never started
    or is gone, which its journal (or its absence) settles. This is on the scheduler's thread
    for every start; the fsyncs and the rename it had were the largest share of a pass
    (``bench_apscheduler``'s notes).
    """
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    descriptor = os.open(path, flags, 0o600)  # 0600 whatever the umask: it holds the environment
    try:
        write_all(descriptor, text.encode("utf-8"))
    finally:
        os.close(descriptor)
